import { Command } from 'commander';
import { loadConfig } from '../../server/config';
import { startServer } from '../../server/server';
import { UsageError } from '../errors';

export function serveCommand(): Command {
  return new Command('serve')
    .description('Run the partner API (migrates the embedded SQLite database by itself)')
    .option('--port <n>', 'port to listen on (default: PORT or 3000)')
    .action(async (opts: { port?: string }) => {
      const config = loadConfig();
      if (opts.port !== undefined) {
        if (!/^\d{1,5}$/.test(opts.port) || Number(opts.port) > 65535) throw new UsageError('--port must be a port number');
        config.port = Number(opts.port);
      }
      const server = await startServer(config);
      process.stdout.write(`Partner API listening on http://localhost:${server.port}/api/v1/partner\n`);
      const shutdown = () => {
        void server.stop().then(() => process.exit(0));
      };
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
    });
}
