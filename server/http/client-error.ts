/**
 * Requests Node's HTTP parser refuses before Express sees them: headers (the URL included) past
 * Node's 16 KB limit, a malformed request line or header. Node's own answer is a bare status with no
 * body; this one carries the contract's error body and the headers every error has, then closes the
 * connection (the parser cannot go on reading it).
 */
import { Server, STATUS_CODES } from 'node:http';
import { Duplex } from 'node:stream';

interface ParserError extends Error {
  code?: string;
}

/** The status and body for a parser error, or null when the peer is gone (nothing to answer). */
function answerFor(err: ParserError): { status: number; error: string; message: string } | null {
  switch (err.code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return null;
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        error: 'request_header_fields_too_large',
        message: 'The request line and headers are larger than 16 KB: send long parameters in a POST body',
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, error: 'request_timeout', message: 'The request was not received in time' };
    default:
      return { status: 400, error: 'bad_request', message: 'The request could not be understood: it is not well-formed HTTP' };
  }
}

function respond(err: ParserError, socket: Duplex): void {
  const answer = answerFor(err);
  if (!answer || !socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({ error: answer.error, message: answer.message });
  socket.end(
    [
      `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Cache-Control: no-store',
      'X-Content-Type-Options: nosniff',
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}

export function answerClientErrors(server: Server): void {
  server.on('clientError', respond);
}
