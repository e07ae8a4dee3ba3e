// The service the task starts in the background: it knows what the greeting should be.
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 18471);
createServer((req, res) => {
  if (req.url === '/health') res.end('ok');
  else if (req.url === '/expected') res.end('hello world');
  else res.writeHead(404).end();
}).listen(port, '127.0.0.1', () => console.log(`listening on ${port}`));
