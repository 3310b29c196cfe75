// A peer of "idemlint serve --store redis://...": another idempotency
// library on Redis in front of the same operation as serve's demo handler,
// for the side-by-side benchmark BenchmarkRedisPeers (cmd/idemlint).
//
//   node server.js PEER REDIS_URL
//
// PEER is one of the keys of peers below; REDIS_URL is
// redis://HOST:PORT[/DB] or unix:///PATH/redis.sock[?db=N]. The server
// listens on a free port of 127.0.0.1, prints "listening on
// http://127.0.0.1:PORT" as serve does, and answers POST /orders like the
// demo: the JSON body read, an order created with a fresh id, 201 with
// {"id", "operation", "request"}. The idempotency key is the
// x-idempotency-key header, scoped by x-tenant-id as serve scopes it; a
// request without a key gets 400, a key reused with another body 422, a
// duplicate of a request still running 409 (none of these libraries waits
// for it, as serve does), a body that is not JSON 400, anything else 404.
import { randomUUID } from 'node:crypto';
import http from 'node:http';

const maxBodyBytes = 1 << 20; // serve's limit
const operation = 'orders.create';
const keyHeader = 'x-idempotency-key';
const tenantHeader = 'x-tenant-id';
const ttlSeconds = 24 * 60 * 60; // the ttl of serve's benchmark policy
const leaseMs = 30_000; // serve's default lease

class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// The demo's memory: it keeps the last demoKeeps orders, as serve's does.
const demoKeeps = 10_000;
const orders = new Map();

function createOrder(body) {
  const order = { id: randomUUID(), operation, request: body };
  orders.set(order.id, order);
  if (orders.size > demoKeeps) orders.delete(orders.keys().next().value);
  return order;
}

function readJSON(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        reject(new HttpError(413, `the body exceeds ${maxBodyBytes} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', reject);
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(new HttpError(400, 'the body is not JSON'));
      }
    });
  });
}

function send(res, status, body) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

// The status each library's refusals get, by error name or code.
const statusOfError = {
  IdempotencyKeyError: 400,
  IdempotencyValidationError: 422,
  IdempotencyAlreadyInProgressError: 409,
  IDEMPOTENCY_KEY_MISSING: 400,
  IDEMPOTENCY_KEY_LEN_EXEEDED: 400,
  IDEMPOTENCY_FINGERPRINT_MISSMATCH: 422,
  REQUEST_IN_PROGRESS: 409,
};

function sendError(res, err) {
  // Powertools wraps some refusals in IdempotencyPersistenceLayerError.
  const status = err.status ?? statusOfError[err.code] ?? statusOfError[err.name] ?? statusOfError[err.cause?.name];
  if (status === undefined) console.error(err);
  send(res, status ?? 500, { error: err.message });
}

// redisOptions turns REDIS_URL into the options that node-redis v1 to v6
// all take (none of them parses unix:// URLs).
function redisOptions(url) {
  const u = new URL(url);
  switch (u.protocol) {
    case 'unix:':
      return { socket: { path: u.pathname }, database: Number(u.searchParams.get('db') ?? 0) };
    case 'redis:':
      return {
        socket: { host: u.hostname, port: Number(u.port || 6379) },
        database: Number(u.pathname.slice(1) || 0),
      };
    default:
      throw new Error(`REDIS_URL ${url}: want redis://HOST:PORT[/DB] or unix:///PATH[?db=N]`);
  }
}

// Each peer connects to Redis and returns the listener for POST /orders
// requests that carry a key.
const peers = {
  // Powertools for AWS Lambda (TypeScript) idempotency with its cache
  // (Redis) persistence layer. A Lambda invocation gets the event and a
  // context; here every request is one invocation, its event the headers
  // and the parsed body, its context one that has leaseMs left, as a
  // function with serve's lease as its timeout would.
  async powertools(redis) {
    const { createClient } = await import('@redis/client');
    const { makeIdempotent, IdempotencyConfig, PERSISTENCE_ATTRIBUTE_KEY_MAPPINGS: attr } = await import(
      '@aws-lambda-powertools/idempotency'
    );
    const { CachePersistenceLayer } = await import('@aws-lambda-powertools/idempotency/cache');
    // The released layer drops the payload hash when a record completes,
    // so with payload validation every replay is refused as a mismatch
    // (aws-powertools/powertools-lambda-typescript#5705, fixed upstream
    // after 2.35.0). This completes a record as the fix does: the same
    // one SET, with the hash kept.
    class CachePersistenceKeepingHash extends CachePersistenceLayer {
      #client;
      constructor(options) {
        super(options);
        this.#client = options.client;
      }
      async _updateRecord(record) {
        const item = {
          [attr.statusAttr]: record.getStatus(),
          [attr.expiryAttr]: record.expiryTimestamp,
          [attr.dataAttr]: record.responseData,
          [attr.validationKeyAttr]: record.payloadHash,
        };
        const ttl = record.expiryTimestamp - Math.floor(Date.now() / 1000);
        await this.#client.set(record.idempotencyKey, JSON.stringify(item), { EX: ttl });
      }
    }
    const client = await createClient(redis).connect();
    const createOrderOnce = makeIdempotent(
      async (event) => ({ statusCode: 201, body: createOrder(event.body) }),
      {
        persistenceStore: new CachePersistenceKeepingHash({ client }),
        config: new IdempotencyConfig({
          eventKeyJmesPath: `[headers."${tenantHeader}", headers."${keyHeader}"]`,
          payloadValidationJmesPath: 'body',
          throwOnNoIdempotencyKey: true,
          expiresAfterSeconds: ttlSeconds,
        }),
      },
    );
    return async (req, res) => {
      const event = { headers: req.headers, body: await readJSON(req) };
      const result = await createOrderOnce(event, { getRemainingTimeInMillis: () => leaseMs });
      send(res, result.statusCode, result.body);
    };
  },

  // @node-idempotency/core with its Redis storage adapter, called as its
  // README shows: onRequest before the operation, onResponse after it.
  async 'node-idempotency'(redis) {
    const { Idempotency } = await import('@node-idempotency/core');
    const { RedisStorageAdapter } = await import('@node-idempotency/storage-adapter-redis');
    const storage = new RedisStorageAdapter(redis);
    await storage.connect();
    const idempotency = new Idempotency(storage, {
      idempotencyKey: keyHeader,
      cacheTTLMS: ttlSeconds * 1000,
      enforceIdempotency: true,
    });
    return async (req, res) => {
      const request = {
        method: req.method,
        path: req.url,
        headers: req.headers,
        body: await readJSON(req),
        options: { cacheKeyPrefix: `idempotency:${req.headers[tenantHeader]}` },
      };
      const stored = await idempotency.onRequest(request);
      if (stored) {
        send(res, stored.additional.status, stored.body);
        return;
      }
      const response = { body: createOrder(request.body), additional: { status: 201 } };
      await idempotency.onResponse(request, response);
      send(res, 201, response.body);
    };
  },

  // express-idempotency with its Redis adapter: an Express middleware, so
  // this peer answers through Express (which parses the body) rather than
  // node:http alone. Its keys are not scoped by tenant: the middleware
  // takes the header as the whole key.
  async 'express-idempotency'(redis) {
    const { default: express } = await import('express');
    const { idempotency, getSharedIdempotencyService } = await import('express-idempotency');
    // A CommonJS module whose class is exports.default.
    const RedisAdapter = (await import('express-idempotency-redis-adapter')).default.default;
    const adapter = new RedisAdapter({ connectionConfig: redis, ttl: ttlSeconds });
    await adapter.connect();
    const app = express();
    app.post(
      '/orders',
      // Any content type, as the other peers and serve read the body.
      express.json({ limit: maxBodyBytes, type: () => true }),
      idempotency({ idempotencyKeyHeader: keyHeader, dataAdapter: adapter }),
      (req, res) => {
        if (getSharedIdempotencyService().isHit(req)) return; // replayed by the middleware
        res.status(201).json(createOrder(req.body));
      },
    );
    // The middleware refuses by setting the status and passing an error;
    // Express's own handler would log each one.
    app.use((err, req, res, next) => {
      const status = err.status ?? (res.statusCode >= 400 ? res.statusCode : 500);
      send(res, status, { error: err.message });
    });
    return app;
  },
};

async function main() {
  const [name, url] = process.argv.slice(2);
  const peer = peers[name];
  if (!peer || !url) {
    throw new Error(`usage: node server.js (${Object.keys(peers).join('|')}) REDIS_URL`);
  }
  const listener = await peer(redisOptions(url));
  const server = http.createServer(async (req, res) => {
    try {
      if (req.method !== 'POST' || req.url !== '/orders') throw new HttpError(404, `no operation ${req.method} ${req.url}`);
      if (!req.headers[keyHeader]) throw new HttpError(400, `the ${keyHeader} header is required`);
      await listener(req, res);
    } catch (err) {
      sendError(res, err);
    }
  });
  server.listen(0, '127.0.0.1', () => {
    console.log(`listening on http://127.0.0.1:${server.address().port}`);
  });
}

main().catch((err) => {
  console.error(err.message);
  process.exit(2);
});
