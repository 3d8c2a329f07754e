// The reference Bluesky PDS (@atproto/pds) with an in-memory PLC directory (@did-plc/server),
// for `make bluesky` and the adapter's contract tests. Everything binds to 127.0.0.1.
//
// Environment: PDS_PORT (default 2583), PLC_PORT (default PDS_PORT + 1), PDS_DATA_DIRECTORY
// (default a fresh temporary folder, removed on exit), PDS_RATE_LIMITS_ENABLED (default false).
// Prints one JSON line {"event": "ready", "pds_url": ..., "plc_url": ...} on stdout when both
// listen; stops on SIGTERM/SIGINT.
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHttpTerminator } from 'http-terminator'
import * as plc from '@did-plc/server'
import { PDS, envToCfg, envToSecrets, readEnv } from '@atproto/pds'

const HOST = '127.0.0.1'
const pdsPort = Number(process.env.PDS_PORT || 2583)
const plcPort = Number(process.env.PLC_PORT || pdsPort + 1)
const ownDirectory = !process.env.PDS_DATA_DIRECTORY
const dataDirectory = process.env.PDS_DATA_DIRECTORY || mkdtempSync(join(tmpdir(), 'local-pds-'))

// PlcServer.start() and PDS.start() listen on every interface: listen on loopback ourselves.
async function listenOnLoopback(app, port) {
  const server = app.listen(port, HOST)
  await once(server, 'listening')
  return server
}

const plcServer = plc.PlcServer.create({ db: plc.Database.mock(), port: plcPort })
const plcHttp = await listenOnLoopback(plcServer.app, plcPort)

Object.assign(process.env, {
  PDS_PORT: String(pdsPort),
  PDS_HOSTNAME: 'localhost',
  PDS_DEV_MODE: 'true',
  PDS_INVITE_REQUIRED: 'false',
  PDS_SERVICE_HANDLE_DOMAINS: '.test',
  // The PDS refuses IP hosts when it resolves DID documents: name loopback "localhost".
  PDS_DID_PLC_URL: `http://localhost:${plcPort}`,
  PDS_DATA_DIRECTORY: dataDirectory,
  PDS_BLOBSTORE_DISK_LOCATION: join(dataDirectory, 'blobs'),
  PDS_JWT_SECRET: randomBytes(16).toString('hex'),
  PDS_ADMIN_PASSWORD: randomBytes(16).toString('hex'),
  PDS_PLC_ROTATION_KEY_K256_PRIVATE_KEY_HEX: randomBytes(32).toString('hex'),
  PDS_RATE_LIMITS_ENABLED: process.env.PDS_RATE_LIMITS_ENABLED || 'false',
  PDS_DISABLE_SSRF_PROTECTION: 'true',
  PDS_CRAWLERS: '',
  LOG_ENABLED: process.env.LOG_ENABLED || 'false',
})
const env = readEnv()
const pds = await PDS.create(envToCfg(env), envToSecrets(env))
await pds.ctx.sequencer.start()
const pdsHttp = await listenOnLoopback(pds.app, pdsPort)
pdsHttp.keepAliveTimeout = 90_000

process.stdout.write(
  JSON.stringify({
    event: 'ready',
    pds_url: `http://127.0.0.1:${pdsPort}`,
    plc_url: `http://localhost:${plcPort}`,
  }) + '\n',
)

async function stop() {
  await createHttpTerminator({ server: pdsHttp }).terminate()
  await pds.ctx.sequencer.destroy?.()
  await createHttpTerminator({ server: plcHttp }).terminate()
  if (ownDirectory) rmSync(dataDirectory, { recursive: true, force: true })
  process.exit(0)
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
