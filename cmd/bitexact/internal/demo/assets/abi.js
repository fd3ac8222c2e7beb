// The reference module's binary request/response encoding
// (wasm/internal/abi) and a client for its exports, for the browser. This is
// transport only: it moves an op name, string parameters and tensors in, and
// tensors or an error message out, exactly as the wazero host does.
//
// Little-endian; a string is a uint32 length and its bytes; a tensor is
// name, dtype, logical (strings), rank (uint32), rank int64 dimensions, a
// uint64 data length and the data. A request is "BXQ1", the op name, the
// parameters sorted by key and the tensors sorted by name; a response is
// "BXS1", then status 0 and tensors, or status 1 and an error message.

import { makeWASI, ProcExit } from "./wasi.js";

export const ABI_VERSION = 1;
const enc = new TextEncoder();
const dec = new TextDecoder();

// A Tensor is { dtype, shape, logical, data: Uint8Array }.
export function tensor(dtype, shape, data, logical = "") {
  return { dtype, shape, logical, data: data instanceof Uint8Array ? data : new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
}
export const f32 = (shape, values) => tensor("F32", shape, Float32Array.from(values));
export const u8 = (shape, values, logical = "") => tensor("U8", shape, Uint8Array.from(values), logical);

// Element views of a tensor's bytes (copies, so alignment never matters).
export function asF32(t) { return new Float32Array(t.data.slice().buffer); }
export function asU16(t) { return new Uint16Array(t.data.slice().buffer); }
export function asU32(t) { return new Uint32Array(t.data.slice().buffer); }

const byKey = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

export function encodeRequest(op, params, inputs) {
  const parts = [];
  const str = (s) => { const b = enc.encode(s); parts.push(u32le(b.length), b); };
  parts.push(enc.encode("BXQ1"));
  str(op);
  const keys = Object.keys(params).sort(byKey);
  parts.push(u32le(keys.length));
  for (const k of keys) { str(k); str(String(params[k])); }
  const names = Object.keys(inputs).sort(byKey);
  parts.push(u32le(names.length));
  for (const n of names) {
    const t = inputs[n];
    str(n); str(t.dtype); str(t.logical || "");
    parts.push(u32le(t.shape.length));
    for (const d of t.shape) parts.push(u64le(BigInt(d)));
    parts.push(u64le(BigInt(t.data.length)), t.data);
  }
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
}

function u32le(v) { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, v, true); return b; }
function u64le(v) { const b = new Uint8Array(8); new DataView(b.buffer).setBigUint64(0, BigInt.asUintN(64, v), true); return b; }

// decodeResponse returns { outputs } or { err }; a malformed response
// throws.
export function decodeResponse(b) {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let o = 0;
  const need = (n, what) => { if (o + n > b.length) throw new Error(`abi: response truncated in ${what}`); };
  const u32 = (what) => { need(4, what); const x = v.getUint32(o, true); o += 4; return x; };
  const u64 = (what) => { need(8, what); const x = v.getBigUint64(o, true); o += 8; return x; };
  const raw = (n, what) => { need(n, what); const x = b.slice(o, o + n); o += n; return x; };
  const str = (what) => dec.decode(raw(u32(what), what));
  if (dec.decode(b.subarray(0, 4)) !== "BXS1") throw new Error("abi: response lacks the BXS1 magic");
  o = 4;
  need(1, "status");
  const status = b[o++];
  if (status === 1) return { err: str("error message") };
  if (status !== 0) throw new Error(`abi: unknown response status ${status}`);
  const outputs = {};
  for (let n = u32("tensor count"); n > 0; n--) {
    const name = str("tensor name");
    const dtype = str("dtype");
    const logical = str("logical");
    const shape = [];
    for (let r = u32("rank"); r > 0; r--) shape.push(Number(BigInt.asIntN(64, u64("dimension"))));
    const data = raw(Number(u64("data length")), "data");
    outputs[name] = { dtype, shape, logical, data };
  }
  if (o !== b.length) throw new Error(`abi: ${b.length - o} trailing response bytes`);
  return { outputs };
}

// OpError is an error the reference reported: its message is the one a
// native ops.Run call gives.
export class OpError extends Error {}

// Reference runs ops in one instance of the module. An instance that traps
// or exits is dropped and the next call makes a fresh one, as package
// wasm's pool does.
export class Reference {
  static async load(url) {
    const resp = await fetch(url);
    if (!resp.ok) throw new Error(`fetching ${url}: HTTP ${resp.status}`);
    const bytes = await resp.arrayBuffer();
    const ref = new Reference();
    ref.bytes = new Uint8Array(bytes);
    ref.module = await WebAssembly.compile(bytes);
    await ref.instantiate();
    return ref;
  }

  async instantiate() {
    this.stderr = "";
    const w = makeWASI((fd, text) => {
      if (fd === 2) this.stderr = (this.stderr + text).slice(0, 4096);
      (fd === 2 ? console.error : console.log)(text);
    });
    const inst = await WebAssembly.instantiate(this.module, w.imports);
    w.bind(inst.exports.memory);
    inst.exports._initialize();
    const v = inst.exports.bitexact_abi();
    if (v !== ABI_VERSION) throw new Error(`module ABI version ${v}, page ${ABI_VERSION}`);
    this.x = inst.exports;
  }

  async guard(f) {
    if (!this.x) await this.instantiate();
    try {
      return f(this.x);
    } catch (e) {
      if (e instanceof OpError) throw e;
      const why = e instanceof ProcExit ? e.message : `the guest failed: ${e}`;
      const tail = this.stderr.trim();
      this.x = null;
      throw new Error(why + (tail ? `; guest stderr: ${tail}` : ""));
    }
  }

  // take copies out a guest buffer given as (address<<32 | length) and
  // frees it.
  take(x, ptrLen) {
    const a = Number(BigInt.asUintN(64, ptrLen) >> 32n), n = Number(BigInt.asUintN(32, ptrLen));
    const b = new Uint8Array(x.memory.buffer, a, n).slice();
    x.bitexact_free(a);
    return b;
  }

  alloc(x, n) {
    const a = x.bitexact_alloc(n) >>> 0;
    if (a === 0) throw new Error(`the guest cannot allocate ${n} bytes`);
    return a;
  }

  // run is ops.Run(op, params, inputs) in the guest: it resolves to the
  // output tensors, or rejects with an OpError carrying the reference's
  // message.
  run(op, params, inputs) {
    return this.guard((x) => {
      const req = encodeRequest(op, params, inputs);
      const a = this.alloc(x, req.length);
      new Uint8Array(x.memory.buffer, a, req.length).set(req);
      const r = decodeResponse(this.take(x, x.bitexact_run(a, req.length)));
      if (r.err !== undefined) throw new OpError(r.err);
      return r.outputs;
    });
  }

  // encode is unary.Lookup(conv).Encode for the float32 with bit pattern
  // bits, through the module's bitexact_unary export (EncodeRange over one
  // input): the same entry point the exhaustive digests use.
  encode(conv, bits, width) {
    return this.guard((x) => {
      const name = enc.encode(conv);
      const a = this.alloc(x, name.length + width);
      try {
        new Uint8Array(x.memory.buffer, a, name.length).set(name);
        const r = x.bitexact_unary(a, name.length, bits >>> 0, name.length, width);
        if (r !== 0n) {
          const resp = decodeResponse(this.take(x, r));
          throw new OpError(resp.err);
        }
        const out = new Uint8Array(x.memory.buffer, a + name.length, width);
        return width === 1 ? out[0] : out[0] | (out[1] << 8);
      } finally {
        try { x.bitexact_free(a); } catch { /* the instance failed; guard drops it */ }
      }
    });
  }
}
