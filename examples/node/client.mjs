// idv-mock from Node: only Node's own fetch and node:crypto, no npm dependency.
//
//   node examples/node/client.mjs            # against `make serve` (http://127.0.0.1:8080/v3)
//   IDV_MOCK_BASE_URL=http://127.0.0.1:9000/v3 IDV_MOCK_API_KEY=k node examples/node/client.mjs
//
// Reads a page of GET /submission, follows nextpageKey (nextpage_id, nextpage_date) to the
// end, PATCHes a submission, then talks to a Secure Data Transfer project: AES-256-ECB,
// key = SHA-256 of the API key, PKCS#7 padding, base64. The control API (/__admin) is the
// mock's own: it creates that project here; against the real service, use your own key.
import { createCipheriv, createDecipheriv, createHash } from "node:crypto";

const BASE = process.env.IDV_MOCK_BASE_URL ?? "http://127.0.0.1:8080/v3";
const KEY = process.env.IDV_MOCK_API_KEY ?? "mock-api-key";
const ADMIN = process.env.IDV_MOCK_ADMIN ?? "admin@example.com";
const ORIGIN = new URL(BASE).origin;

// --- Secure Data Transfer ---
const aesKey = (apiKey) => createHash("sha256").update(apiKey, "utf8").digest();

export function encrypt(value, apiKey) {
  const cipher = createCipheriv("aes-256-ecb", aesKey(apiKey), null); // PKCS#7 by default
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return Buffer.concat([cipher.update(text, "utf8"), cipher.final()]).toString("base64");
}

export function decrypt(base64, apiKey) {
  const decipher = createDecipheriv("aes-256-ecb", aesKey(apiKey), null);
  const plain = Buffer.concat([decipher.update(base64, "base64"), decipher.final()]);
  return JSON.parse(plain.toString("utf8"));
}

// --- calls ---
async function call(method, path, { apiKey = KEY, query, json, form } = {}) {
  const url = new URL(BASE + path);
  for (const [name, value] of Object.entries(query ?? {})) url.searchParams.set(name, value);
  const headers = { "x-api-key": apiKey };
  let body;
  if (json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(json);
  } else if (form !== undefined) {
    body = new URLSearchParams(form); // fetch sets application/x-www-form-urlencoded
  }
  const response = await fetch(url, { method, headers, body });
  const hint = response.headers.get("x-idv-mock-hint"); // the mock's near-miss hint, if any
  const doc = await response.json();
  if (!response.ok) {
    throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(doc)} ${hint ?? ""}`);
  }
  return doc;
}

async function readAll(count) {
  let page = await call("GET", "/submission", { query: { count } });
  const items = [...page.Items];
  console.log(`page 1: ${page.Items.length} submissions, nextpageKey ${page.nextpageKey?.id}`);
  let pages = 1;
  while (page.nextpageKey) {
    const { id, created_at } = page.nextpageKey;
    page = await call("GET", "/submission", {
      query: { count, nextpage_id: id, nextpage_date: created_at },
    });
    items.push(...page.Items);
    pages += 1;
  }
  console.log(`all pages: ${pages} pages, ${items.length} submissions`);
  return items;
}

async function patchMemo(submissionId, memo) {
  const answer = await call("PATCH", "/submission", {
    json: { submissionId, admin: ADMIN, data: { memo } },
  });
  console.log(`PATCH: ${answer.message}`);
  const [item] = (await call("GET", "/submission", { query: { submission_id: submissionId } })).Items;
  console.log(`memo now: ${item.memo.text}`);
}

async function secureProject() {
  // mock only: a project with Secure Data Transfer on, and one submission in it
  const secureKey = "node-secure-key";
  const project = { project_id: "node-secure", api_key: secureKey, admins: [ADMIN],
    options: { secure_transfer: true } };
  const created = await fetch(`${ORIGIN}/__admin/projects`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(project),
  });
  if (created.status !== 201 && created.status !== 409) throw new Error(await created.text());
  const sub = await fetch(`${ORIGIN}/__admin/projects/node-secure/submissions`, {
    method: "POST", headers: { "content-type": "application/json" }, body: "{}",
  }).then((r) => r.json());
  return { secureKey, submissionId: sub.submission_id };
}

async function secureTransfer() {
  const { secureKey, submissionId } = await secureProject();
  const read = await call("GET", "/submission", {
    apiKey: secureKey, query: { data: encrypt({ submission_id: submissionId }, secureKey) },
  });
  const page = decrypt(read.data, secureKey);
  console.log(`secure GET: isEncrypted ${read.isEncrypted}, decrypted ${page.Items.length} item,`
    + ` submission_id ${page.Items[0].submission_id === submissionId ? "matches" : "DIFFERS"}`);
  const body = { submissionId, admin: ADMIN, data: { memo: "from node" } };
  const edited = await call("PATCH", "/submission", {
    apiKey: secureKey, form: { data: encrypt(body, secureKey) }, // the spec: form field data
  });
  console.log(`secure PATCH: ${decrypt(edited.data, secureKey).message}`);
}

const items = await readAll("20");
await patchMemo(items[0].submission_id, "checked from node");
await secureTransfer();
console.log("done");
