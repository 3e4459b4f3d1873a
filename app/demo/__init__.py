"""The embedded offline demo model: a scripted support agent behind a real
loopback HTTP server that speaks every dialect as its provider frames it."""
