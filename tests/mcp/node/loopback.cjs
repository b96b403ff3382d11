// Preloaded into a Node MCP server by tests/mcp (node --require): every server socket listens
// on 127.0.0.1 only (the servers call app.listen(PORT), which means every interface), and the
// port it got is printed on stderr as "LISTENING <port>" (they are started with PORT=0).
"use strict";
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
    if (typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
  } else if (args[0] && typeof args[0] === "object" && !args[0].path) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  this.once("listening", () => {
    const address = this.address();
    if (address && typeof address === "object") {
      process.stderr.write(`LISTENING ${address.port} ${address.address}\n`);
    }
  });
  return listen.apply(this, args);
};
