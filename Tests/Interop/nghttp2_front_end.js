#!/usr/bin/env node
// A provider front end on a second HTTP/2 implementation: Node's `http2` module, which is nghttp2 (the C library
// behind curl's and Apache httpd's HTTP/2). It answers as FCM HTTP v1 (with its OAuth token endpoint) and APNs do,
// over TLS with ALPN h2, and turns the same knobs as the in-repo NIO fake (`FakeFrontEnd`), each the way nghttp2 does
// it by default:
//
//   maxConcurrentStreams        SETTINGS_MAX_CONCURRENT_STREAMS of new connections (and of open ones, when changed)
//   goAwayEvery / goAwayLimit   when the Nth stream of a connection arrives: session.goaway(code, thatStreamId,
//                               debugData); every stream up to it is answered, none above it is processed;
//                               session.close() goAwayCloseAfterMs later (nghttp2 then sends its own
//                               GOAWAY with the last processed stream id and closes once the streams below it end)
//   goAwayError                 {code, debugData}: the GOAWAY's error code (APNs: INTERNAL_ERROR, {"reason":"Shutdown"})
//   refuseEvery                 every Nth request (across connections) reset with REFUSED_STREAM before processing
//   resetAfterProcessingEvery   every Nth request processed (recorded), then reset with INTERNAL_ERROR unanswered
//   answerDelayMs [min, max]    each answer waits a random time in that range
//
// Usage: node nghttp2_front_end.js <cert.pem> <key.pem>. It prints one line to stderr when it listens:
// `nghttp2 front end listening on <port>, control on <port>`. The control port speaks plain HTTP/1.1 on 127.0.0.1:
//   GET  /state     {records: [{path, status, token}], goAways, refused, resetsAfterProcessing, ignored,
//                    connections, tokenRequests}
//   POST /knobs     a JSON object merged into the knobs (a key set to null turns that knob off)
//   POST /settings  {maxConcurrentStreams}: sent on every open connection and used for new ones
//   POST /revoke    every access token issued so far is refused from now on (401 UNAUTHENTICATED)
// A request the front end does not let through (refused, or on a stream above a GOAWAY's last stream id) is not
// recorded: the records are exactly what was processed.
'use strict';
const http2 = require('http2');
const http = require('http');
const fs = require('fs');

const [certFile, keyFile] = process.argv.slice(2);
const C = http2.constants;

const knobs = {
  maxConcurrentStreams: null,
  goAwayEvery: null,
  goAwayLimit: null,
  goAwayCloseAfterMs: 1000,
  goAwayError: null,
  refuseEvery: null,
  resetAfterProcessingEvery: null,
  answerDelayMs: null,
};
const state = { records: [], goAways: 0, refused: 0, resetsAfterProcessing: 0, ignored: 0, connections: 0, tokenRequests: 0 };
let requests = 0;
let issued = 0;
const validTokens = new Set();
const sessions = new Set();

const errorCodes = { INTERNAL_ERROR: C.NGHTTP2_INTERNAL_ERROR, NO_ERROR: C.NGHTTP2_NO_ERROR, ENHANCE_YOUR_CALM: C.NGHTTP2_ENHANCE_YOUR_CALM };

function settings() {
  return { maxConcurrentStreams: knobs.maxConcurrentStreams ?? 4294967295 };
}

const server = http2.createSecureServer({
  cert: fs.readFileSync(certFile),
  key: fs.readFileSync(keyFile),
  allowHTTP1: false,
  settings: settings(),
});

server.on('session', (session) => {
  state.connections += 1;
  sessions.add(session);
  session.requests = 0;
  session.goAwayLastStreamID = null;
  session.on('close', () => sessions.delete(session));
  session.on('error', () => {});
});

server.on('stream', (stream, headers) => {
  const session = stream.session;
  stream.on('error', () => {});
  // Streams arrive in stream id order: the Nth one is the highest this connection has let in when the GOAWAY names it.
  session.requests += 1;
  if (session.goAwayLastStreamID == null && knobs.goAwayEvery && session.requests >= knobs.goAwayEvery &&
      (knobs.goAwayLimit == null || state.goAways < knobs.goAwayLimit)) {
    session.goAwayLastStreamID = stream.id;
    state.goAways += 1;
    const error = knobs.goAwayError;
    const code = error ? (errorCodes[error.code] ?? C.NGHTTP2_INTERNAL_ERROR) : C.NGHTTP2_NO_ERROR;
    session.goaway(code, stream.id, error ? Buffer.from(error.debugData) : undefined);
    setTimeout(() => {
      if (!session.destroyed) session.close();
      // A stream that never ends would hold the session open for ever.
      setTimeout(() => { if (!session.destroyed) session.destroy(); }, 5000).unref();
    }, knobs.goAwayCloseAfterMs ?? 1000);
  }
  const chunks = [];
  stream.on('data', (c) => chunks.push(c));
  stream.on('end', () => {
    if (session.goAwayLastStreamID != null && stream.id > session.goAwayLastStreamID) {
      // Above the GOAWAY's last stream id: not processed (nghttp2 itself drops those that arrive after it).
      state.ignored += 1;
      stream.close(C.NGHTTP2_REFUSED_STREAM);
      return;
    }
    requests += 1;
    if (knobs.refuseEvery && requests % knobs.refuseEvery === 0) {
      state.refused += 1;
      stream.close(C.NGHTTP2_REFUSED_STREAM);
      return;
    }
    const answer = handle(headers, Buffer.concat(chunks));
    if (knobs.resetAfterProcessingEvery && requests % knobs.resetAfterProcessingEvery === 0) {
      state.resetsAfterProcessing += 1;
      stream.close(C.NGHTTP2_INTERNAL_ERROR);
      return;
    }
    const send = () => {
      if (stream.destroyed || stream.closed) return;
      stream.respond({ ':status': answer.status, 'content-type': 'application/json', ...answer.headers });
      stream.end(answer.body);
    };
    const delay = knobs.answerDelayMs;
    if (delay) setTimeout(send, delay[0] + Math.random() * (delay[1] - delay[0]));
    else send();
  });
});

function handle(headers, body) {
  const path = headers[':path'] || '';
  if (path === '/token') {
    state.tokenRequests += 1;
    issued += 1;
    const token = `nghttp2-token-${issued}`;
    validTokens.add(token);
    return { status: 200, headers: {}, body: JSON.stringify({ access_token: token, expires_in: 3600, token_type: 'Bearer' }) };
  }
  const fcm = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(path);
  if (fcm) {
    let token = null;
    try { token = JSON.parse(body.toString()).message.token; } catch (e) {}
    const bearer = (headers.authorization || '').replace(/^Bearer /, '');
    if (!validTokens.has(bearer)) {
      state.records.push({ path, status: 401, token });
      return { status: 401, headers: {}, body: JSON.stringify({ error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } }) };
    }
    state.records.push({ path, status: 200, token });
    return { status: 200, headers: {}, body: JSON.stringify({ name: `projects/${fcm[1]}/messages/${state.records.length}` }) };
  }
  const apns = /^\/3\/device\/([0-9a-fA-F]+)$/.exec(path);
  if (apns) {
    if (!(headers.authorization || '').startsWith('bearer ')) {
      state.records.push({ path, status: 403, token: apns[1] });
      return { status: 403, headers: {}, body: JSON.stringify({ reason: 'MissingProviderToken' }) };
    }
    state.records.push({ path, status: 200, token: apns[1] });
    return { status: 200, headers: { 'apns-id': `00000000-0000-0000-0000-${String(state.records.length).padStart(12, '0')}` }, body: '' };
  }
  return { status: 404, headers: {}, body: JSON.stringify({ reason: 'BadPath' }) };
}

const control = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : {};
    if (req.method === 'GET' && req.url === '/state') {
      res.end(JSON.stringify(state));
      return;
    }
    if (req.method === 'POST' && req.url === '/knobs') {
      Object.assign(knobs, body);
      server.updateSettings(settings());
    } else if (req.method === 'POST' && req.url === '/settings') {
      knobs.maxConcurrentStreams = body.maxConcurrentStreams;
      server.updateSettings(settings());
      for (const s of sessions) if (!s.destroyed) s.settings(settings());
    } else if (req.method === 'POST' && req.url === '/revoke') {
      validTokens.clear();
    } else {
      res.statusCode = 404;
    }
    res.end('{}');
  });
});

server.listen(0, '127.0.0.1', () => {
  control.listen(0, '127.0.0.1', () => {
    process.stderr.write(`nghttp2 front end listening on ${server.address().port}, control on ${control.address().port}\n`);
  });
});
