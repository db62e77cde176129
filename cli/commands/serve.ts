import { Command } from 'commander';
import { atRun, cliConfig, openDatabase } from '../context';
import { examples, output } from '../output';
import { CliFailure, UsageError } from '../errors';
import { cliIo } from '../io';
import { groupCommand } from './groups';

/** The API's address as a person on this machine types it: the host listened on, or localhost when that is every interface. */
const announcedApi = (host: string, port: number) => `http://${atRun.server().urlHost(host, 'localhost')}:${port}/api/v1/partner`;

/** Why the server could not listen, in one line naming the address (Node's says `listen EADDRNOTAVAIL …`). */
function listenProblem(err: unknown, host: string, port: number): Error {
  const at = `${atRun.server().urlHost(host, host)}:${port}`;
  switch ((err as NodeJS.ErrnoException).code) {
    case 'EADDRNOTAVAIL':
      return new CliFailure(`cannot listen on ${at}: ${host} is not an address of this machine (see HOST and --host)`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new CliFailure(`cannot listen on ${at}: host ${host} not found`);
    case 'EADDRINUSE':
      return new CliFailure(`cannot listen on ${at}: the port is in use (another server?); choose another with PORT or --port`);
    case 'EACCES':
      return new CliFailure(`cannot listen on ${at}: permission denied (ports below 1024 need privileges)`);
    default:
      return err as Error;
  }
}

export function serveCommand(): Command {
  return groupCommand('serve')
    .option('--port <n>', 'port to listen on (default: PORT or 3000)')
    .option('--host <address>', 'address to listen on: 127.0.0.1 for this machine only, 0.0.0.0 for every interface (default: HOST or 0.0.0.0)')
    .option('--json', 'announce the address as one JSON line: { status, port, api }')
    .addHelpText(
      'after',
      examples('invoicing serve', 'invoicing serve --host 127.0.0.1 --port 8080', 'PORT=8080 BASE_URL=https://billing.example.com invoicing serve --json'),
    )
    .action(async (opts: { port?: string; host?: string; json?: boolean }) => {
      const config = cliConfig();
      if (opts.port !== undefined) {
        if (!/^\d{1,5}$/.test(opts.port) || Number(opts.port) > 65535) throw new UsageError('--port must be a port number');
        config.port = Number(opts.port);
        // Payment and signing links follow the port when BASE_URL does not say otherwise.
        if (cliIo().env.BASE_URL === undefined && config.port !== 0) config.baseUrl = atRun.config().defaultBaseUrl(config.port);
      }
      if (opts.host !== undefined) {
        if (atRun.config().hostAddress.validate(opts.host).error) throw new UsageError(`--host must be an IP address or a host name, e.g. 127.0.0.1, not "${opts.host}"`);
        config.host = opts.host;
      }
      const db = await openDatabase(config);
      let server;
      try {
        server = await atRun.server().startServer(config, { db });
      } catch (err) {
        await db.close();
        throw listenProblem(err, config.host, config.port);
      }
      const api = announcedApi(config.host, server.port);
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
