// Preloaded into the Node MCP programs of tests/mcp (node --require): every TCP server they
// start listens on 127.0.0.1 only (they call listen(PORT), which means every interface), and
// the port it got is printed on stderr as "LISTENING <port> <address>" (start them with
// PORT=0). The socket is bound before listen() returns, as listen(0) without a host is, so a
// program that reads server.address() right after listen() still finds its port.
"use strict";
const net = require("node:net");
const { TCP, constants } = process.binding("tcp_wrap");

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  const port =
    typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))
      ? Number(first)
      : first && typeof first === "object" && !first.path && !first.handle && !first.fd
        ? Number(first.port || 0)
        : null;
  if (port === null) return listen.apply(this, args); // a pipe, a handle: not TCP
  const callback = typeof args[args.length - 1] === "function" ? args.pop() : undefined;
  const handle = new TCP(constants.SERVER);
  const err = handle.bind("127.0.0.1", port);
  if (err) {
    handle.close();
    const error = new Error(`listen on 127.0.0.1:${port} failed (${err})`);
    process.nextTick(() => this.emit("error", error));
    return this;
  }
  this.once("listening", () => {
    const address = this.address();
    process.stderr.write(`LISTENING ${address.port} ${address.address}\n`);
  });
  return listen.call(this, handle, callback);
};
