/**
 * Ceiling R1: a bare node:http server answering a small JSON body, the most any HTTP endpoint in
 * Node can do on the same core. It prints its port on stdout once listening and stops on SIGTERM.
 */
import { createServer } from 'node:http';

const body = JSON.stringify({ active: true, sub: '6f1c1f53-7c4e-4a55-9d0b-3c3f4c1c2b1a', scope: 'openid profile email' });
const server = createServer((request, response) => {
  // Read (and drop) any body, as a real endpoint must before answering.
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
    response.end(body);
  });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : ''}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
