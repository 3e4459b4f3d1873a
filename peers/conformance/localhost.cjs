// Preloaded (node --require) into the conformance suite: its scenario servers call
// listen(port) with no host, which binds every interface, and read address().port at
// once. Hold each one to 127.0.0.1, bound synchronously as the host-less call is (a
// listen(port, host) looks the host up first, so address() would still be null):
// net.Server's own _listen2 (setupListenHandle) is what listen calls once it has an address.
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  const hostless = first === undefined || typeof first === "number" ||
    (typeof first === "string" && /^\d+$/.test(first));
  if (hostless && typeof this._listen2 === "function" && args.every((a) => typeof a !== "string" || a === first)) {
    const callback = args.find((a) => typeof a === "function");
    if (callback) this.once("listening", callback);
    this._listen2("127.0.0.1", Number(first || 0), 4, 511, undefined, 0);
    return this;
  }
  if (first && typeof first === "object" && !first.path && !first.host) {
    args[0] = { ...first, host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
