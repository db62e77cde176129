import { Command } from 'commander';
import { atRun, cliConfig, openDatabase } from '../context';
import { examples, output } from '../output';
import { UsageError } from '../errors';
import { groupCommand } from './groups';

export function serveCommand(): Command {
  return groupCommand('serve')
    .option('--port <n>', 'port to listen on (default: PORT or 3000)')
    .option('--json', 'announce the address as one JSON line: { status, port, api }')
    .addHelpText('after', examples('invoicing serve', 'PORT=8080 BASE_URL=https://billing.example.com invoicing serve --json'))
    .action(async (opts: { port?: string; json?: boolean }) => {
      const config = cliConfig();
      if (opts.port !== undefined) {
        if (!/^\d{1,5}$/.test(opts.port) || Number(opts.port) > 65535) throw new UsageError('--port must be a port number');
        config.port = Number(opts.port);
      }
      const db = await openDatabase(config);
      let server;
      try {
        server = await atRun.server().startServer(config, { db });
      } catch (err) {
        await db.close();
        throw err;
      }
      const api = `http://localhost:${server.port}/api/v1/partner`;
      output(opts.json, { status: 'listening', port: server.port, api }, () => [`Partner API listening on ${api}`]);
      const shutdown = () => {
        void server
          .stop()
          .then(() => db.close())
          .then(() => process.exit(0));
      };
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
    });
}
