// Preloaded into a node server under test (node --require): a listen() given a port and no
// host binds 127.0.0.1, never every interface (server-everything calls app.listen(PORT)).
"use strict";
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if ((typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) &&
      (args.length === 1 || typeof args[1] === "function")) {
    args.splice(1, 0, "127.0.0.1");
  } else if (first && typeof first === "object" && !first.host && !first.path) {
    args[0] = { ...first, host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
