import { Command } from 'commander';
import { loadConfig } from '../../server/config';
import { startServer } from '../../server/server';
import { output } from '../context';
import { UsageError } from '../errors';

export function serveCommand(): Command {
  return new Command('serve')
    .description('Run the partner API (migrates the embedded SQLite database by itself)')
    .option('--port <n>', 'port to listen on (default: PORT or 3000)')
    .option('--json', 'announce the address as one JSON line')
    .action(async (opts: { port?: string; json?: boolean }) => {
      const config = loadConfig();
      if (opts.port !== undefined) {
        if (!/^\d{1,5}$/.test(opts.port) || Number(opts.port) > 65535) throw new UsageError('--port must be a port number');
        config.port = Number(opts.port);
      }
      const server = await startServer(config);
      const api = `http://localhost:${server.port}/api/v1/partner`;
      output(opts.json, { status: 'listening', port: server.port, api }, () => [`Partner API listening on ${api}`]);
      const shutdown = () => {
        void server.stop().then(() => process.exit(0));
      };
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
    });
}
