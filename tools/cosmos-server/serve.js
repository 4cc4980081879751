// serve.js starts the pinned @vercel/cosmosdb-server as the tests need it:
// HTTPS on 127.0.0.1:PORT with keep-alive, as Azure's gateway serves. The
// package's own cli.js answers every request with "Connection: close", so
// each request of a client paid a new TCP connection and TLS handshake there
// (5 handshakes per cold Get), which no Azure account charges.
//
// Usage: node serve.js <path of the package's lib/index.js> <port> <host>
"use strict";

const [lib, port, host] = process.argv.slice(2);
const { createHttpsServer } = require(lib);

const server = createHttpsServer({ keepAlive: true });
// Keep idle connections longer than Go's transport does (90 s): then the
// client, not the server, closes an idle one, and a request is never sent
// on a connection the server is closing.
server.keepAliveTimeout = 300 * 1000;
server.headersTimeout = server.keepAliveTimeout + 1000;
server.listen(Number(port), host, () => {
  console.log(`Ready to accept HTTPS connections at ${host}:${server.address().port}`);
});
