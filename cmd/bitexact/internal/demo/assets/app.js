// The demo page. Every code, scale, packed byte and value shown comes from
// the reference module (abi.js); this file reads inputs, asks the module,
// and lays out what it answers.

import { Reference, OpError, u8, tensor, asF32, asU16, asU32 } from "./abi.js";
import { parseF32, fmtF32, exactDecimal, f32value, f32bits, hex } from "./float32.js";

let ref, meta;

// ---- DOM helpers -----------------------------------------------------------

function h(tag, attrs = {}, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("data-") || k.startsWith("aria-") || ["title", "id", "for", "role", "colspan"].includes(k)) el.setAttribute(k, v);
    else el[k] = v;
  }
  for (const k of kids.flat(Infinity)) {
    if (k === null || k === undefined || k === false) continue;
    el.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return el;
}
const $ = (id) => document.getElementById(id);

function svgEl(tag, attrs = {}, ...kids) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  for (const k of kids) el.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return el;
}

// view runs one view's computation, showing an inline message instead of
// results when the input is bad or the reference refuses it. The section's
// data-status (ok / error) and data-seq let a test wait for the result.
const latest = {};

async function view(name, compute) {
  const sec = $(name), out = $(`${name}-out`), err = $(`${name}-error`);
  const token = (latest[name] = {});
  sec.dataset.status = "busy";
  try {
    const node = await compute();
    if (latest[name] !== token) return; // a newer input is on its way
    out.replaceChildren(node);
    err.hidden = true;
    err.textContent = "";
    sec.dataset.status = "ok";
  } catch (e) {
    if (latest[name] !== token) return;
    err.textContent = e instanceof OpError ? `The reference says: ${e.message}` : e.message;
    err.hidden = false;
    out.replaceChildren();
    sec.dataset.status = "error";
    if (!(e instanceof OpError) && !(e instanceof InputError)) console.error(e);
  }
  sec.dataset.seq = String(Number(sec.dataset.seq || 0) + 1);
}

class InputError extends Error {}

// values reads whitespace- or comma-separated VALUEs as float32 bits, at
// most cap of them: a view draws every value, and a page asked to draw tens
// of thousands would freeze the tab.
const TEXT_CAP = 20000;
function values(text, cap, what) {
  if (text.length > TEXT_CAP) throw new InputError(`the input is ${text.length} characters long; at most ${TEXT_CAP} are read here (${what} takes at most ${cap} values; for more, use the bitexact CLI or the Go packages)`);
  // Separators: white space, commas, semicolons, and the brackets of a
  // pasted Python or JSON list.
  const parts = normalizeMinus(text).split(/[\s,;()[\]]+/).filter((s) => s !== "");
  if (parts.length > cap) throw new InputError(`${parts.length} values: ${what} takes at most ${cap} (for more, use the bitexact CLI or the Go packages)`);
  return parts.map((p, i) => {
    try { return parseF32(p); } catch (e) { throw new InputError(`value ${i + 1}: ${e.message}`); }
  });
}

const f32t = (shape, bits) => tensor("F32", shape, Uint32Array.from(bits));
const hx = (v, w) => "0x" + hex(v, w);
const bin = (v, w) => (w === 0 ? "" : (v >>> 0).toString(2).padStart(w, "0"));
const byDigits = (bits) => (bits + 3) >> 2;

function selectOf(id, items, label) {
  const s = h("select", { id, title: label });
  for (const it of items) s.append(h("option", { value: it.name, title: it.source }, it.name));
  return s;
}
const sourceOf = (items, name) => (items.find((x) => x.name === name) || {}).source || "";

// ---- View 1: a value under every profile, or a code in both directions ----

const decodeTables = {};

// decodeTable decodes every code of a format through the format's decode
// op, once: the codes' values, and the representable values in order.
async function decodeTable(fmt) {
  if (decodeTables[fmt.name]) return decodeTables[fmt.name];
  const width = fmtWidth(fmt);
  const n = 1 << width, d = fmt.decode;
  let input;
  if (d.dtype === "U8") input = u8([n], Array.from({ length: n }, (_, i) => i), d.logical);
  else input = tensor(d.dtype, [n], Uint16Array.from({ length: n }, (_, i) => i));
  const out = await ref.run(d.op, d.params, { [d.input]: input });
  const vals = asF32(out.x), bits = asU32(out.x);
  const order = [];
  for (let c = 0; c < n; c++) if (vals[c] === vals[c]) order.push(c);
  // Ascending by value; equal values (+0 and -0) keep the lower code first.
  order.sort((a, b) => vals[a] - vals[b] || a - b);
  return (decodeTables[fmt.name] = { vals, bits, order });
}

const fmtWidth = (fmt) => fmt.fields[0] + fmt.fields[1] + fmt.fields[2];

// neighbours: the representable values just below and just above x, and
// x's own code when x is representable.
function neighbours(table, x) {
  const { vals, order } = table;
  // Among codes of equal value (+0 and -0 compare equal) the lowest code
  // stands for the value, except that x itself is matched sign and all.
  let below = null, above = null, equal = null;
  for (const c of order) {
    const v = vals[c];
    if (v < x && (below === null || v > vals[below])) below = c;
    else if (v > x && above === null) above = c;
    else if (v === x && (equal === null || (Object.is(v, x) && !Object.is(vals[equal], x)))) equal = c;
  }
  // x is a tie when it lies exactly halfway between two neighbours. Both
  // are values of a format of at most 16 bits, so their float64 sum and
  // its half are exact.
  const tie = equal === null && below !== null && above !== null && (vals[below] + vals[above]) / 2 === x;
  return { below, equal, above, tie };
}

// A clickable bit: toggling it gives the input `code` (a format code or
// float32 bits) with that bit flipped.
function bitSpan(cls, title, bit, target, code) {
  return h("button", { type: "button", class: `bit ${cls}`, title: `${title}: click to flip bit ${bit}`, "data-bit": bit, "data-target": target, "data-of": code >>> 0 }, "");
}

// fieldBits lays out a code's bits, sign/exponent/mantissa coloured; with
// a target ("e4m3" or "f32") each bit is a button that flips it.
function fieldBits(fields, code, target) {
  const [s, e, m] = fields, w = s + e + m;
  const spans = [];
  for (let i = w - 1; i >= 0; i--) {
    const cls = i >= e + m ? "f-s" : i >= m ? "f-e" : "f-m";
    const title = cls === "f-s" ? "sign" : cls === "f-e" ? "exponent" : "mantissa";
    const b = target ? bitSpan(cls, title, i, target, code) : h("span", { class: cls }, "");
    b.textContent = String((code >>> i) & 1);
    spans.push(b);
    if (target === "f32" && (i === 31 || i === 23)) spans.push(" ");
  }
  return spans;
}

// formula explains a code's value from its fields: (-1)^s x 2^(E-bias) x
// 1.m, or 0.m x 2^(1-bias) for a subnormal. The value printed at the end is
// the module's decoding of the code, not the page's arithmetic.
function formula(fmt, code, valueBits) {
  const [s, e, m] = fmt.fields;
  const v = f32value(valueBits);
  const E = (code >>> m) & ((1 << e) - 1), M = code & ((1 << m) - 1), S = s ? (code >>> (e + m)) & 1 : 0;
  const fieldText = [s ? `sign ${S}` : null, `exponent ${bin(E, e)} = ${E}`, m ? `mantissa ${bin(M, m)} = ${M}` : null].filter(Boolean).join(", ");
  let rhs;
  if (v !== v || !isFinite(v)) rhs = `special code (${fmt.specials})`;
  else if (m === 0) rhs = `2^(${E} − ${fmt.bias})`;
  else if (E === 0) rhs = `${S ? "−" : ""}2^(1 − ${fmt.bias}) × 0.${bin(M, m)}₂ (subnormal: 0 + ${M}/${1 << m})`;
  else rhs = `${S ? "−" : ""}2^(${E} − ${fmt.bias}) × 1.${bin(M, m)}₂ (1 + ${M}/${1 << m})`;
  return h("span", { class: "formula" }, `${fieldText}: `, rhs, " = ", h("b", {}, fmtF32(valueBits)));
}

// diffText is the signed difference y - x of two float32 values (exact in
// float64 up to the 3 digits shown), or a word when either is not finite.
function diffText(yBits, x) {
  const y = f32value(yBits);
  if (y !== y || x !== x) return "NaN";
  if (!isFinite(y) || !isFinite(x)) return y === x ? "0" : "∞";
  const d = y - x;
  if (d === 0) return "0";
  const rel = x !== 0 ? ` (${Number((100 * d / x).toPrecision(2))}%)` : "";
  return (d > 0 ? "+" : "") + Number(d.toPrecision(3)) + rel;
}

const isNaNBits = (bits) => (bits & 0x7fffffff) > 0x7f800000;

// tieRuleOf names what a profile did with a tie: of the two nearest codes
// it picked `pick`, not `other`.
function tieRuleOf(table, pick, other) {
  const even = (pick & 1) === 0 && (other & 1) === 1;
  const away = Math.abs(table.vals[pick]) > Math.abs(table.vals[other]);
  if (even) return `rounds the tie to the even code (here ${away ? "away from" : "toward"} zero)`;
  return `rounds the tie ${away ? "away from" : "toward"} zero`;
}

// why is one plain sentence on why profile B's code differs from profile
// A's for x (bits xb, value x) in a format with decode table t. Values are
// compared as numbers (a tie between -0.5 and 0 may round to -0).
function why(fmt, t, nb, a, b, ca, cb, xb, x) {
  const va = t.vals[ca], vb = t.vals[cb], na = isNaNBits(t.bits[ca]), nbn = isNaNBits(t.bits[cb]);
  const sa = fmtF32(t.bits[ca]), sb = fmtF32(t.bits[cb]);
  const digits = byDigits(fmtWidth(fmt)), code = (c) => hx(c, digits);
  if (x !== x) {
    if (na && nbn) {
      if ((t.bits[ca] >>> 31) === (t.bits[cb] >>> 31))
        return `NaN payload: both give a NaN of the same sign, ${a} as code ${code(ca)}, ${b} as ${code(cb)} (a fixed NaN pattern instead of the input's payload, or the other way round).`;
      return `NaN sign: x is a ${xb >>> 31 ? "negative" : "positive"} NaN; ${b} ${(t.bits[cb] >>> 31) === (xb >>> 31) ? "keeps" : "drops"} its sign (${code(cb)}) where ${a} gives ${code(ca)}.`;
    }
    return `NaN: ${fmt.name.toUpperCase()} ${na || nbn ? "has a NaN code, but" : "has no NaN, so"} ${b} turns NaN into ${sb} where ${a} gives ${sa}.`;
  }
  if (!fmt.fields[0] && x <= 0) return `no sign, no zero: ${fmt.name.toUpperCase()} cannot hold x ≤ 0; ${a} gives ${sa}, ${b} gives ${sb}.`;
  if (va === 0 && vb === 0) return `−0: the result rounds to zero; ${Object.is(vb, -0) ? b + " keeps the sign (−0)" : b + " drops the sign (+0)"} where ${a} gives ${sa}.`;
  const maxFinite = Math.max(...t.order.map((c) => t.vals[c]).filter(isFinite));
  if (!isFinite(x) || Math.abs(x) > maxFinite) {
    const sat = (v) => isFinite(v) && Math.abs(v) === maxFinite;
    const what = (v, n, s) => (n ? "NaN" : !isFinite(v) ? (v > 0 ? "+Inf" : "-Inf") : sat(v) ? `the largest finite value ${s}` : s);
    const kind = (sat(va) || sat(vb)) && (na || nbn || !isFinite(va) || !isFinite(vb)) ? ` (saturate vs ${na || nbn ? "NaN" : "Inf"})` : "";
    return `overflow: |x| is beyond the largest finite ${fmt.name.toUpperCase()} value ${fmtF32(f32bits(maxFinite))}; ${a} gives ${what(va, na, sa)}, ${b} gives ${what(vb, nbn, sb)}${kind}.`;
  }
  if (na !== nbn) return `out of range: ${na ? a : b} returns NaN for this x, ${na ? b : a} the value ${na ? sb : sa}.`;
  const vBelow = nb && nb.below !== null ? t.vals[nb.below] : NaN, vAbove = nb && nb.above !== null ? t.vals[nb.above] : NaN;
  const between = (v) => v === vBelow || v === vAbove;
  if (nb && nb.tie && between(va) && between(vb)) {
    const other = (c) => (t.vals[c] === vBelow ? nb.above : nb.below);
    return `tie: x is exactly halfway between ${fmtF32(t.bits[nb.below])} and ${fmtF32(t.bits[nb.above])}; ${a} ${tieRuleOf(t, ca, other(ca))} (${sa}), ${b} ${tieRuleOf(t, cb, other(cb))} (${sb}).`;
  }
  if ((va === 0) !== (vb === 0)) return `tiny value: ${va === 0 ? a : b} flushes x to zero, ${va === 0 ? b : a} keeps ${va === 0 ? sb : sa}.`;
  if (nb && between(va) && between(vb))
    return `rounding direction: x lies between ${fmtF32(t.bits[nb.below])} and ${fmtF32(t.bits[nb.above])} (not halfway); ${a} rounds ${va > x ? "up" : "down"}, ${b} rounds ${vb > x ? "up" : "down"}.`;
  return `${b} gives ${sb} where ${a} gives ${sa}: their rounding rules differ at this input (see the sources).`;
}

// readValue reads the value view's input: a code ("e4m3:0x7e",
// "e2m1:0b0111", "fp16:15360"), float32 bits ("0x3f800000",
// "bits:0x3f800000") or a value (float32.js's parseF32). It returns
// { x } (float32 bits) or { fmt, code }.
const VALUE_CAP = 400;
function readValue(raw) {
  const text = normalizeMinus(raw).trim();
  if (text.length > VALUE_CAP) throw new InputError(`the value is ${text.length} characters long; at most ${VALUE_CAP} are read (a float32 needs at most 112 significant digits)`);
  let m = /^([a-z0-9]+):\s*(0x[0-9a-f]+|0b[01]+|\d+)$/i.exec(text);
  if (m && m[1].toLowerCase() !== "bits") {
    const fmt = meta.formats.find((f) => f.name === m[1].toLowerCase());
    if (!fmt) throw new InputError(`"${m[1]}" is not a format; codes are written ${meta.formats.map((f) => f.name + ":0x…").join(", ")}`);
    const w = fmtWidth(fmt), s = m[2].toLowerCase();
    const code = s.startsWith("0b") ? parseInt(s.slice(2), 2) : Number(s);
    if (!(code < 2 ** w)) throw new InputError(`${fmt.name} codes have ${w} bits (0 to 0x${hex(2 ** w - 1, byDigits(w))}); ${m[2]} is too large`);
    return { fmt, code };
  }
  if ((m = /^(?:[+]?)0x([0-9a-f]+)$/i.exec(text))) {
    if (m[1].length > 8) throw new InputError(`"${text}" has ${m[1].length} hex digits; a float32 bit pattern has at most 8 (a hex float needs a p exponent: 0x1.8p-1)`);
    return { x: parseInt(m[1], 16) >>> 0 };
  }
  try {
    return { x: parseF32(text) };
  } catch (e) {
    throw new InputError(`${e.message}. Give a value (0.75, -1e-3, 0x1.8p-1, inf, nan), float32 bits (0x3f800000) or a code (e4m3:0x7e, e2m1:0b0111)`);
  }
}

// normalizeMinus reads the typographic minus signs people paste (U+2212,
// en dash U+2013) as ASCII "-".
const normalizeMinus = (s) => s.replace(/[\u2212\u2013]/g, "-");

// setValue puts text in the value input and runs the view.
let goValue = () => {};
function setValue(text) { $("value-input").value = text; goValue(); }

async function showValue() {
  const text = $("value-input").value;
  const inp = readValue(text);
  let x, codeHead = null;
  if (inp.fmt) {
    const fmt = inp.fmt, t = await decodeTable(fmt), w = fmtWidth(fmt);
    const c = inp.code, n = 2 ** w, cs = (v) => `${fmt.name}:0x${hex(v, byDigits(w))}`;
    x = t.bits[c] >>> 0;
    codeHead = h("div", { class: "codehead", id: "code-head", "data-format": fmt.name, "data-code": hx(c, byDigits(w)) },
      h("p", { class: "xline" }, `${fmt.name.toUpperCase()} code `, h("b", {}, hx(c, byDigits(w))), " ",
        h("span", { class: "bits" }, fieldBits(fmt.fields, c, fmt.name)), " → ",
        h("b", { id: "code-value" }, fmtF32(x))),
      h("p", { class: "nb" }, formula(fmt, c, x)),
      h("p", { class: "steps" }, "step: ",
        h("button", { type: "button", class: "step", id: "code-prev", "data-goto": cs((c + n - 1) % n) }, `◀ ${cs((c + n - 1) % n)}`), " ",
        h("button", { type: "button", class: "step", id: "code-next", "data-goto": cs((c + 1) % n) }, `${cs((c + 1) % n)} ▶`),
        h("span", { class: "hint" }, ` · click a bit to flip it; the value below is this code's value, encoded again under every profile. Decoding is the same under every profile of ${fmt.name}.`)));
  } else x = inp.x;
  const xv = f32value(x);
  const xs = (v) => "0x" + hex(v >>> 0, 8);
  const head = h("div", {}, codeHead,
    h("p", { class: "xline" }, "x = ", h("b", { class: "echo", title: text.trim() }, inp.fmt ? fmtF32(x) : echo(text)), " → float32 ",
      h("code", { id: "value-bits" }, hx(x, 8)), " ", h("span", { class: "bits f32bits" }, fieldBits([1, 8, 23], x, "f32"))),
    h("p", { class: "exact", id: "value-exact" }, "exactly ", exactDecimal(x)),
    h("p", { class: "steps" }, "float32 pattern: ",
      h("button", { type: "button", class: "step", id: "f32-prev", "data-goto": xs(x - 1) }, `◀ ${xs(x - 1)}`), " ",
      h("button", { type: "button", class: "step", id: "f32-next", "data-goto": xs(x + 1) }, `${xs(x + 1)} ▶`)));
  const blocks = [head];
  for (const fmt of meta.formats) {
    const convs = meta.conversions.filter((c) => c.format === fmt.name);
    const table = await decodeTable(fmt);
    const digits = byDigits(convs[0].bits);
    const nb = xv === xv ? neighbours(table, xv) : null;
    const rows = [], codes = [], whys = [];
    let disagree = false;
    for (const c of convs) {
      const code = await ref.encode(c.name, x, c.bits > 8 ? 2 : 1);
      codes.push(code);
      const differs = code !== codes[0];
      disagree ||= differs;
      rows.push(h("tr", { class: differs ? "differs" : "" },
        h("td", { class: "prof" }, c.profile, differs ? h("span", { class: "mark", title: `differs from ${convs[0].profile}` }, " ≠") : null),
        h("td", { class: "code", "data-conv": c.name }, hx(code, digits)),
        h("td", { class: "bits" }, fieldBits(fmt.fields, code, fmt.name)),
        h("td", { class: "val" }, fmtF32(table.bits[code])),
        h("td", { class: "err", "data-conv-err": c.name }, diffText(table.bits[code], xv)),
        h("td", { class: "src" }, c.source)));
      // The reason goes under the table, where it wraps to the card's
      // width even when the table scrolls.
      if (differs) whys.push(h("p", { class: "why", "data-why": c.name },
        h("b", {}, `${c.profile} ≠ ${convs[0].profile}`), " why: ", why(fmt, table, nb, convs[0].profile, c.profile, codes[0], code, x, xv)));
    }
    const nbBtn = (c, cls) => (c === null ? h("span", { class: cls, "data-code": "" }, "none")
      : h("button", { type: "button", class: `nbbtn ${cls}`, "data-code": hx(c, digits), "data-goto": `${fmt.name}:${hx(c, digits)}`, title: "show this code" },
        `${fmtF32(table.bits[c])} (${hx(c, digits)})`));
    const nbLine = nb
      ? h("p", { class: "nb", "data-format": fmt.name, "data-tie": nb.tie ? "1" : "" },
        "representable neighbours: ", nbBtn(nb.below, "nb-below"),
        nb.equal !== null ? [" < ", nbBtn(nb.equal, "nb-equal"), " < "] : " < x < ",
        nbBtn(nb.above, "nb-above"),
        nb.tie ? h("span", { class: "tie-mark", title: "x is exactly halfway between its two neighbours: the tie rule decides" }, "tie") : null)
      : h("p", { class: "nb" }, "x is NaN: no neighbours");
    const distinct = [...new Set(codes)];
    blocks.push(h("div", { class: "fmt", "data-format": fmt.name },
      h("h3", {}, fmt.name.toUpperCase(), " ",
        h("span", { class: "legend" }, fmt.fields[0] ? h("span", { class: "f-s" }, "sign ") : null,
          h("span", { class: "f-e" }, "exponent "), fmt.fields[2] ? h("span", { class: "f-m" }, "mantissa") : null,
          ` · bias ${fmt.bias}`),
        disagree ? h("span", { class: "disagree" }, "profiles disagree") : null),
      h("div", { class: "scroll" }, h("table", { class: "valtab" },
        h("thead", {}, h("tr", {}, ["profile", "code", "bits", "decoded y", "error y − x", "source"].map((t) => h("th", {}, t)))),
        h("tbody", {}, rows))),
      whys,
      distinct.map((c) => h("p", { class: "nb formula-line", "data-code": hx(c, digits) }, hx(c, digits), ": ", formula(fmt, c, table.bits[c]))),
      nbLine));
  }
  return h("div", {}, blocks);
}

// echo shows what was typed, shortened when long (the full text is in the
// element's title).
function echo(text) {
  const s = text.trim();
  return s.length <= 48 ? s : `${s.slice(0, 22)}…${s.slice(-22)} (${s.length} characters)`;
}

// ---- View 2: an NVFP4 / MXFP4 block ----------------------------------------

function randomBlock(n) {
  // Gaussian-ish values with one outlier: the shape of real activations.
  const v = [];
  for (let i = 0; i < n; i++) {
    const g = (Math.random() + Math.random() + Math.random() - 1.5) * 2;
    v.push(Number(g.toPrecision(3)));
  }
  v[Math.floor(Math.random() * n)] *= 6;
  return v.map((x) => Number(x.toPrecision(3))).join(" ");
}

async function quantizeNV(xb, k, recipe) {
  const p = { recipe };
  const q = await ref.run("nvfp4.quantize", p, { x: f32t([1, k], xb) });
  const codes = (await ref.run("e2m1.unpack", {}, { packed: q.packed })).codes;
  const elem = asU32((await ref.run("e2m1.decode", {}, { codes })).x);
  const scaleVals = asU32((await ref.run("fp8.decode", { format: "e4m3" }, { codes: q.scales })).x);
  const y = (await ref.run("nvfp4.dequantize", p, { packed: q.packed, scales: q.scales, global: q.global })).y;
  return { packed: q.packed.data, scales: q.scales.data, scaleVals, global: asU32(q.global)[0], codes: codes.data, elem, y: asF32(y), yBits: asU32(y) };
}

async function quantizeMX(xb, k, mode, profile) {
  const q = await ref.run("mxfp4.quantize", { mode, profile }, { x: f32t([1, k], xb) });
  const codes = (await ref.run("e2m1.unpack", {}, { packed: q.packed })).codes;
  const elem = asU32((await ref.run("e2m1.decode", {}, { codes })).x);
  const scaleVals = asU32((await ref.run("e8m0.decode", {}, { codes: q.scales })).x);
  const y = (await ref.run("mxfp4.dequantize", {}, { packed: q.packed, scales: q.scales })).y;
  return { packed: q.packed.data, scales: q.scales.data, scaleVals, codes: codes.data, elem, y: asF32(y), yBits: asU32(y) };
}

const fv = (bits) => fmtF32(bits);
const errText = (y, x) => {
  if (y !== y || x !== x) return "NaN";
  if (!isFinite(y) || !isFinite(x)) return y === x ? "0" : y - x > 0 ? "+Inf" : "-Inf";
  const d = y - x; // both float32; the float64 difference is exact
  return d === 0 ? "0" : (d > 0 ? "+" : "") + Number(d.toPrecision(3));
};

// errorStats is the largest |y - x| and the root mean square of y - x over
// the elements where x and y are both finite, and how many were left out.
function errorStats(y, xs) {
  let max = 0, ss = 0, n = 0, skipped = 0;
  xs.forEach((x, i) => {
    if (!isFinite(x) || !isFinite(y[i])) { skipped++; return; }
    const d = Math.abs(y[i] - x);
    max = Math.max(max, d); ss += d * d; n++;
  });
  return { max: n ? max : NaN, rms: n ? Math.sqrt(ss / n) : NaN, n, skipped };
}
const p3 = (v) => (v === v ? String(Number(v.toPrecision(3))) : "—");

// plot draws the block: the input as bars and each dequantization as
// markers. A non-finite value cannot be placed on the axis: it is drawn as
// a dashed bar over the full height, labelled NaN, +Inf or -Inf.
function plot(xs, series) {
  const W = 560, H = 200, P = 28;
  const label = (v) => (v !== v ? "NaN" : v > 0 ? "+Inf" : "-Inf");
  const all = xs.concat(...series.map((s) => Array.from(s.y))).filter((v) => isFinite(v));
  let lo = Math.min(0, ...all), hi = Math.max(0, ...all);
  if (hi === lo) hi = lo + 1;
  const sx = (i) => P + (i + 0.5) * (W - 2 * P) / xs.length;
  const sy = (v) => H - P - (Math.max(lo, Math.min(hi, v)) - lo) * (H - 2 * P) / (hi - lo);
  const g = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, class: "plot", role: "img", "aria-label": "the block: input bars, dequantized markers" });
  g.append(svgEl("line", { x1: P, x2: W - P, y1: sy(0), y2: sy(0), class: "axis" }));
  g.append(svgEl("text", { x: 2, y: sy(hi) + 4, class: "tick" }, Number(hi.toPrecision(3))));
  g.append(svgEl("text", { x: 2, y: sy(lo) + 4, class: "tick" }, Number(lo.toPrecision(3))));
  xs.forEach((v, i) => {
    if (isFinite(v)) g.append(svgEl("line", { x1: sx(i), x2: sx(i), y1: sy(0), y2: sy(v), class: "orig" }));
    else {
      g.append(svgEl("line", { x1: sx(i), x2: sx(i), y1: P, y2: H - P, class: "nonfinite", "data-i": i }));
      g.append(svgEl("text", { x: sx(i), y: H - P + 12, class: "tick nf-label", "text-anchor": "middle" }, label(v)));
    }
  });
  for (const s of series) {
    s.y.forEach((v, i) => {
      if (!isFinite(v)) {
        if (isFinite(xs[i]) || (v === v) !== (xs[i] === xs[i])) g.append(svgEl("text", { x: sx(i) + s.dx, y: P - 2 + (s.dx > 0 ? 0 : -9), class: `tick nf-label ${s.cls}-nf`, "text-anchor": "middle" }, label(v)));
        return;
      }
      const cx = sx(i) + s.dx, cy = sy(v);
      g.append(s.shape === "sq"
        ? svgEl("rect", { x: cx - 3, y: cy - 3, width: 6, height: 6, class: s.cls })
        : svgEl("circle", { cx, cy, r: 3.2, class: s.cls }));
    });
  }
  let lx = P;
  for (const [cls, label] of [["orig", "original"], ...series.map((s) => [s.cls, s.label])]) {
    g.append(svgEl("rect", { x: lx, y: 6, width: 10, height: 10, class: cls + " key" }));
    g.append(svgEl("text", { x: lx + 14, y: 15, class: "tick" }, label));
    lx += 24 + label.length * 6.5;
  }
  return g;
}

async function showBlock() {
  const xb = values($("block-input").value, 32, "a block");
  const k = xb.length;
  if (k !== 16 && k !== 32) throw new InputError(`a block is 16 or 32 values; got ${k}`);
  const xs = xb.map(f32value);
  const nv = await quantizeNV(xb, k, $("nv-recipe").value);
  const mx = k % 32 === 0 ? await quantizeMX(xb, k, $("mx-mode").value, $("mx-profile").value) : null;
  const head = h("tr", {}, ["i", "x", "NVFP4 code", "e2m1", "dequantized y", "y − x"].map((t) => h("th", {}, t)),
    mx ? ["MXFP4 code", "e2m1", "dequantized y", "y − x"].map((t) => h("th", { class: "mx" }, t)) : null);
  const rows = xs.map((x, i) => h("tr", { class: i % 16 === 0 && i ? "blk" : "" },
    h("td", {}, i), h("td", {}, fmtF32(xb[i])),
    h("td", { class: "code nv-code" }, hx(nv.codes[i], 1)), h("td", {}, fv(nv.elem[i])),
    h("td", { class: "nv-y", "data-bits": hex(nv.yBits[i], 8) }, fv(nv.yBits[i])), h("td", { class: "err" }, errText(nv.y[i], x)),
    mx ? [h("td", { class: "code mx-code mx" }, hx(mx.codes[i], 1)), h("td", { class: "mx" }, fv(mx.elem[i])),
      h("td", { class: "mx-y mx", "data-bits": hex(mx.yBits[i], 8) }, fv(mx.yBits[i])), h("td", { class: "err mx" }, errText(mx.y[i], x))] : null));
  const bytes = (cls, b) => h("code", { class: cls }, Array.from(b, (v) => hex(v, 2)).join(" "));
  const nvScales = Array.from(nv.scales, (c, i) => h("li", {}, `block ${i}: `, h("code", { class: "nv-scale" }, hx(c, 2)), ` = ${fv(nv.scaleVals[i])} (E4M3)`));
  const mxScales = mx ? Array.from(mx.scales, (c, i) => h("li", {}, `block ${i}: `, h("code", { class: "mx-scale" }, hx(c, 2)), ` = ${fv(mx.scaleVals[i])} (E8M0)`)) : [];
  const series = [{ y: nv.y, cls: "nv", label: "NVFP4", shape: "sq", dx: -3 }];
  if (mx) series.push({ y: mx.y, cls: "mxp", label: "MXFP4", shape: "o", dx: 3 });
  const recipe = meta.nvfp4Recipes.find((r) => r.name === $("nv-recipe").value) || meta.nvfp4Recipes[0];
  const div = recipe.perTensor === "divide";
  // One worked element, with the module's numbers: the largest finite
  // |x| (its code is not zero).
  let i0 = -1;
  xs.forEach((v, i) => { if (isFinite(v) && (i0 < 0 || Math.abs(v) > Math.abs(xs[i0]))) i0 = i; });
  i0 = Math.max(i0, 0);
  const nvWorked = `y[${i0}] = ${fv(nv.elem[i0])} × ${fv(nv.scaleVals[i0 >> 4])} ${div ? "÷" : "×"} ${fv(nv.global)} = ${fv(nv.yBits[i0])}`;
  const mxWorked = mx ? `y[${i0}] = ${fv(mx.elem[i0])} × ${fv(mx.scaleVals[0])} = ${fv(mx.yBits[i0])}` : "";
  const nonFinite = xs.filter((v) => !isFinite(v)).length;
  const nvNaN = recipe.nanAmax === "ignore"
    ? `a NaN element does not enter its block's amax (the other 15 keep their scale) and dequantizes to NaN`
    : `a NaN element makes its block's amax NaN, so the whole block's E4M3 scale is NaN`;
  const nvStats = errorStats(nv.y, xs), mxStats = mx ? errorStats(mx.y, xs) : null;
  const statCell = (st, cls, key) => h("td", { class: `${cls} stat`, id: `${cls}-${key}` }, p3(st[key]));
  const better = (k) => (mxStats && nvStats[k] !== mxStats[k] ? (nvStats[k] < mxStats[k] ? "NVFP4" : "MXFP4") : "equal");
  const stats = h("div", { class: "scroll" }, h("table", { class: "stats", id: "block-stats" },
    h("thead", {}, h("tr", {}, h("th", {}, "error over the block"), h("th", {}, "NVFP4"), h("th", {}, "MXFP4"), h("th", {}, "smaller"))),
    h("tbody", {},
      h("tr", {}, h("td", {}, "max |y − x|"), statCell(nvStats, "nv", "max"), mxStats ? statCell(mxStats, "mx", "max") : h("td", {}, "—"), h("td", {}, mx ? better("max") : "—")),
      h("tr", {}, h("td", {}, "RMS of y − x"), statCell(nvStats, "nv", "rms"), mxStats ? statCell(mxStats, "mx", "rms") : h("td", {}, "—"), h("td", {}, mx ? better("rms") : "—")))),
    nvStats.skipped ? h("p", { class: "hint" }, `${nvStats.skipped} element(s) with a non-finite x or y are left out of these figures.`) : null);
  return h("div", {},
    h("div", { class: "cols" },
      h("div", {},
        h("h3", {}, "NVFP4 ", h("small", {}, `recipe ${recipe.name}: ${recipe.source}`)),
        h("p", { class: "formula", id: "nv-formula" }, `y = e2m1(code) × e4m3(block scale) ${div ? "÷ g (the stored per-tensor encode scale)" : "× p (the stored per-tensor decode scale)"}`, h("br"), h("small", {}, nvWorked)),
        h("p", {}, "per-tensor global ", h("code", { id: "nv-global" }, fv(nv.global)), "; E4M3 block scales (16 values each):"),
        h("ul", {}, nvScales),
        h("p", { class: "packed" }, "packed bytes (element 2i in the low nibble): ", bytes("nv-packed", nv.packed))),
      mx ? h("div", {},
        h("h3", {}, "MXFP4 ", h("small", {}, `scale ${$("mx-mode").value}: ${sourceOf(meta.mxScaleModes, $("mx-mode").value)}`)),
        h("p", { class: "formula", id: "mx-formula" }, "y = e2m1(code) × 2^(E − 127) (the E8M0 shared scale)", h("br"), h("small", {}, mxWorked)),
        h("p", {}, "E8M0 shared scale (32 values):"), h("ul", {}, mxScales),
        h("p", { class: "packed" }, "packed bytes: ", bytes("mx-packed", mx.packed)))
        : h("div", { class: "note" }, h("h3", {}, "MXFP4"), h("p", {}, "An MXFP4 block is 32 values: give 32 to see it."))),
    h("p", { class: `nanrule ${nonFinite ? "has-nonfinite" : ""}`, id: "block-nanrule" },
      nonFinite ? h("b", {}, `This block has ${nonFinite} non-finite value(s). `) : "NaN and ±Inf: ",
      `NVFP4 (${recipe.name}): the per-tensor amax ignores NaN and ±Inf; ${nvNaN}; ±Inf counts in the block amax. `,
      mx ? `MXFP4: ${meta.mxNonFinite}` : ""),
    plot(xs, series),
    stats,
    h("div", { class: "scroll" }, h("table", { class: "blocktab" }, h("thead", {}, head), h("tbody", {}, rows))));
}

// ---- View 3: AWQ packing ---------------------------------------------------

const colColour = (c) => `c${c}`;

function wordView(word, map, label, cls) {
  const nibs = [];
  for (let p = 7; p >= 0; p--) {
    const v = (word >>> (4 * p)) & 0xf;
    nibs.push(h("div", { class: `nib ${colColour(map[p])}`, "data-nibble": p, "data-col": map[p] },
      h("div", { class: "nib-bits" }, `${4 * p + 3}..${4 * p}`),
      h("div", { class: "nib-val" }, hex(v, 1)),
      h("div", { class: "nib-col" }, `col ${map[p]}`)));
  }
  return h("div", { class: "word" },
    h("div", { class: "word-label" }, label, " ", h("code", { class: cls }, hx(word, 8)), ` (int32 ${word | 0})`),
    h("div", { class: "nibs" }, nibs));
}

async function showAWQ() {
  const wb = values($("awq-input").value, 512, "the AWQ view (64 rows of 8)");
  if (wb.length === 0 || wb.length % 8 !== 0) throw new InputError(`AWQ packs 8 output columns per int32: give 8 weights per row (a multiple of 8 values); got ${wb.length}`);
  const ic = wb.length / 8;
  const quantizer = $("awq-quantizer").value;
  const w16 = (await ref.run("fp16.encode", {}, { x: f32t([ic, 8], wb) })).y;
  const q = await ref.run("awq.quantize", { quantizer, group: "-1" }, { w: w16 });
  const un = await ref.run("awq.unpack", {}, { qweight: q.qweight, qzeros: q.qzeros });
  // Ask the packer where each column goes: pack the row 0 1 2 ... 7 and
  // read the nibbles back.
  const probe = asU32((await ref.run("awq.pack", { layout: meta.awqLayout.name }, { q: u8([1, 8], [0, 1, 2, 3, 4, 5, 6, 7]) })).qweight)[0];
  const map = Array.from({ length: 8 }, (_, p) => (probe >>> (4 * p)) & 0xf);
  const wv = asU32((await ref.run("fp16.decode", {}, { y: w16 })).x);
  const sv = asU32((await ref.run("fp16.decode", {}, { y: q.scales })).x);
  const dq = (await ref.run("awq.dequantize", {}, { qweight: q.qweight, qzeros: q.qzeros, scales: q.scales })).w;
  const dv = asU32((await ref.run("fp16.decode", {}, { y: dq })).x);
  const words = asU32(q.qweight), zw = asU32(q.qzeros)[0];
  const sbits = asU16(q.scales);
  const colRows = [];
  for (let c = 0; c < 8; c++) {
    colRows.push(h("tr", {},
      h("td", { class: colColour(c) }, `col ${c}`),
      h("td", {}, Array.from({ length: ic }, (_, r) => fv(wv[r * 8 + c])).join(", ")),
      h("td", {}, h("code", { class: "awq-scale" }, hx(sbits[c], 4)), " = ", fv(sv[c])),
      h("td", { class: "awq-zero" }, un.zeros.data[c]),
      h("td", {}, Array.from({ length: ic }, (_, r) => un.q.data[r * 8 + c]).join(", ")),
      h("td", {}, Array.from({ length: ic }, (_, r) => fv(dv[r * 8 + c])).join(", "))));
  }
  return h("div", {},
    h("p", {}, `W is [IC=${ic}, OC=8] in fp16, one group of ${ic} input channels (group = IC). Quantizer `,
      h("b", {}, quantizer), `: ${sourceOf(meta.awqQuantizers, quantizer)}. Layout `, h("b", {}, meta.awqLayout.name), `: ${meta.awqLayout.source}.`),
    h("p", { class: "nibmap", id: "awq-map" }, "nibble map (nibble p holds column): ",
      map.map((c, p) => h("span", { class: `chip ${colColour(c)}` }, `${p}→${c}`))),
    Array.from(words, (wd, r) => wordView(wd, map, `qweight[${r}][0]`, "awq-qweight")),
    wordView(zw, map, "qzeros[0][0]", "awq-qzeros"),
    h("div", { class: "scroll" }, h("table", { class: "awqtab" }, h("thead", {}, h("tr", {}, ["column", "w (fp16)", "scale", "zero z", "stored u", "dequantized (u − z)·s"].map((t) => h("th", {}, t)))),
      h("tbody", {}, colRows))));
}

// ---- View 4: 2:4 sparsity --------------------------------------------------

async function show24() {
  const xb = values($("sp-input").value, 256, "the 2:4 view");
  const k = xb.length;
  if (k === 0 || k % 8 !== 0) throw new InputError(`a 2:4 row is a multiple of 8 FP4 values (two groups of 4 per metadata byte); got ${k}`);
  const codes = (await ref.run("e2m1.encode", {}, { x: f32t([1, k], xb) })).codes;
  const vals = asU32((await ref.run("e2m1.decode", {}, { codes })).x);
  const tie = $("sp-tie").value;
  const sel = {};
  for (const r of meta.tieRules) sel[r.name] = (await ref.run("sparse24.select", { tie: r.name }, { codes })).meta.data;
  const comp = await ref.run("sparse24.compress", { tie }, { codes });
  const meta4 = sel[tie];
  const groups = [];
  for (let g = 0; g < k / 4; g++) {
    const m = meta4[g], i0 = m & 3, i1 = m >> 2;
    const others = meta.tieRules.filter((r) => sel[r.name][g] !== m).map((r) => `${r.name} keeps ${sel[r.name][g] & 3},${sel[r.name][g] >> 2}`);
    const cells = [0, 1, 2, 3].map((j) => {
      const kept = j === i0 || j === i1, v = vals[4 * g + j];
      return h("div", { class: `cell ${kept ? "kept" : "dropped"}`, title: `code ${hx(codes.data[4 * g + j], 1)}` },
        h("div", { class: "cell-i" }, j), h("div", { class: "cell-v" }, fv(v)),
        xb[4 * g + j] !== v ? h("div", { class: "cell-x", title: `rounded from ${fmtF32(xb[4 * g + j])}` }, `from ${isNaNBits(xb[4 * g + j]) ? "NaN" : fmtF32(xb[4 * g + j])}`) : null);
    });
    groups.push(h("div", { class: `group ${others.length ? "contested" : ""}`, "data-group": g },
      h("div", { class: "cells" }, cells),
      h("div", { class: "gmeta" }, "kept ", h("b", { class: "sp-kept" }, `${i0},${i1}`), " meta ",
        h("code", { class: "sp-nib" }, bin(m, 4)), h("small", {}, ` (i1=${bin(i1, 2)} i0=${bin(i0, 2)})`)),
      others.length ? h("div", { class: "gdiff" }, "⚠ ", others.join("; ")) : null));
  }
  const bytes = (cls, b, note) => h("p", {}, note, " ", h("code", { class: cls }, Array.from(b, (v) => hex(v, 2)).join(" ")),
    h("br"), h("small", {}, "bits: ", Array.from(b, (v) => bin(v, 8)).join(" ")));
  return h("div", {},
    h("p", { class: "tie" }, "tie rule ", h("b", {}, tie), `: ${sourceOf(meta.tieRules, tie)}. `,
      h("small", {}, "Values of distinct rank are kept by rank; among equal ranks the lower index wins. Groups marked ⚠ are decided differently by another rule.")),
    h("div", { class: "groups" }, groups),
    bytes("sp-comp", comp.comp.data, "compressed bytes (value i0 low nibble, i1 high):"),
    bytes("sp-meta", comp.meta.data, "metadata bytes (group 2t low nibble, 2t+1 high; nibble = i0 | i1<<2):"));
}

// ---- View 5: the ecosystem matrix ------------------------------------------

// ecosystem.json is generated from the records under conformance/harness
// (`bitexact ecosystem`, the same rows as docs/ecosystem.md); this view
// only lays it out. A unary row that differs from its format's canonical
// profile links to the value view on an input where they differ.

const commas = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

function cmpText(c) {
  if (!c) return "";
  if (c.differing_chunks === 0) return "0 inputs differ";
  const n = c.differing_inputs < 0 ? `${c.differing_chunks} chunks of 2^24 differ` : `${commas(c.differing_inputs)} inputs differ in ${c.differing_chunks} chunks`;
  return n;
}

// valueHref is the link to the value view with input v, keeping the other
// views' state in the query.
function valueHref(v) {
  const q = new URLSearchParams(location.search);
  q.set("v", v);
  return `?${q}#value`;
}

function provenance(r) {
  return h("div", { class: "prov" }, h("span", { class: "eco-date" }, r.date), " · ", r.build);
}

function ecoUnaryRow(u) {
  const l = u.link;
  let against = h("span", { class: "note" }, "is the canonical profile");
  if (u.canonical) against = h("span", {}, h("code", {}, u.canonical.profile), ": ", cmpText(u.canonical));
  else if (!u.conforms) against = h("span", {}, h("code", {}, u.nearest.profile), ": ", cmpText(u.nearest));
  let link = h("span", { class: "note" }, "—");
  if (l) {
    const who = l.profile ? h("code", {}, l.profile) : "the implementation";
    link = h("div", {},
      h("a", { href: valueHref(l.input), class: "eco-link", "data-input": l.input, "data-profile": l.profile, "data-got": l.got,
        "data-canonical": l.canonical, "data-want": l.want }, `x = ${l.input} ▸`),
      h("div", { class: "eco-why" }, who, " gives ", h("b", {}, l.got), ", ", h("code", {}, l.canonical), " ", h("b", {}, l.want),
        l.from === "reference" ? h("span", { class: "note", title: "the record kept chunk digests only; it equals its profile on all 2^32 inputs, so the first input where that profile and the canonical one differ is one where the implementation does" }, " (first input where the two profiles differ)") : h("span", { class: "note" }, " (the record's first difference)")));
  }
  const prof = u.conforms ? h("code", { class: "eco-ok" }, u.nearest.profile)
    : h("span", {}, h("b", { class: "bad" }, "none"), ": nearest ", h("code", {}, u.nearest.profile), ", ", cmpText(u.nearest));
  return h("tr", { "data-record": u.record, class: u.canonical || !u.conforms ? "eco-differs" : null },
    h("td", { "data-label": "format" }, h("b", {}, u.format)),
    h("td", { "data-label": "implementation" }, u.implementation, h("div", {}, h("code", { class: "fn" }, u.function)), provenance(u)),
    h("td", { "data-label": "conforms to" }, prof),
    h("td", { "data-label": "vs canonical" }, against),
    h("td", { "data-label": "where they differ" }, link));
}

function ecoTableRow(t) {
  const fmt = t.op.split(".")[0];
  const diffs = t.referenceDiffs.map((d) => {
    const code = d.split(":")[0];
    return h("div", {}, h("a", { href: valueHref(`${fmt}:${code}`), class: "eco-link", "data-input": `${fmt}:${code}` }, `${fmt}:${code} ▸`), " ", d.slice(code.length + 1));
  });
  return h("tr", { "data-record": t.record, class: t.referenceDiffs.length ? "eco-differs" : null },
    h("td", { "data-label": "op" }, h("b", {}, t.op)),
    h("td", { "data-label": "implementation" }, t.implementation, h("div", {}, h("code", { class: "fn" }, t.function)), provenance(t)),
    h("td", { "data-label": "reproduced by" }, t.model ? (t.modelDiffs.length ? h("span", {}, h("b", { class: "bad" }, "none"), `: ${t.model} differs on ${t.modelDiffs.length} codes`) : h("code", { class: "eco-ok" }, t.model)) : h("b", { class: "bad" }, "no model")),
    h("td", { "data-label": "vs the reference" }, t.reference ? h("div", {}, h("code", {}, t.reference), `: ${t.referenceDiffs.length} of ${t.codes} codes differ`, diffs) : ""));
}

function ecoBlockRow(b) {
  return h("tr", { "data-record": b.record },
    h("td", { "data-label": "suite" }, h("b", {}, b.suite)),
    h("td", { "data-label": "implementation" }, b.implementation,
      b.library ? h("div", { class: "prov" }, `${b.library} @ ${b.commit}`) : null, h("div", { class: "prov" }, b.platform)),
    h("td", { "data-label": "conforms to" }, b.conforms.length ? b.conforms.map((p) => h("code", { class: "eco-ok" }, p)).flatMap((e, i) => (i ? [", ", e] : [e])) : h("b", { class: "bad" }, "none")),
    h("td", { "data-label": "other profiles" }, b.others.map((o) => `${o.profile} (${o.mismatches} elements differ)`).join(", ")),
    h("td", { "data-label": "record" }, h("code", { class: "fn" }, `conformance/harness/${b.record}`)));
}

// ecoBlockGroups lays the block records out one collapsed group per suite:
// a suite holds a record per library, version and device (over a hundred
// in all), and a summary line says how many conform to a named profile.
function ecoBlockGroups(blocks, table) {
  const bySuite = new Map();
  for (const b of blocks) {
    if (!bySuite.has(b.suite)) bySuite.set(b.suite, []);
    bySuite.get(b.suite).push(b);
  }
  return [...bySuite].map(([suite, bs]) => {
    const ok = bs.filter((b) => b.conforms.length).length;
    return h("details", { class: "eco-suite", "data-suite": suite },
      h("summary", {}, h("b", {}, suite), ` — ${bs.length} record${bs.length === 1 ? "" : "s"}, ${ok} conform to a named profile`),
      table(null, ["suite", "implementation, platform", "conforms to", "other profiles", "record"], bs.map(ecoBlockRow)));
  });
}

let ecosystem;
async function showEcosystem() {
  if (!ecosystem) {
    const r = await fetch("ecosystem.json");
    if (!r.ok) throw new Error(`ecosystem.json: ${r.status} ${r.statusText}`);
    ecosystem = await r.json();
  }
  const e = ecosystem;
  const table = (id, heads, rows) => h("table", { class: "eco", id }, h("thead", {}, h("tr", {}, heads.map((x) => h("th", {}, x)))), h("tbody", {}, rows));
  const differ = e.unary.filter((u) => u.canonical || !u.conforms).length, conform = e.unary.filter((u) => u.conforms).length;
  return h("div", {},
    h("p", { class: "eco-sum" }, `${e.unary.length} unary conversions run on all 2^32 float32 inputs: ${conform} conform to a named profile, ${differ} differ from their format's canonical profile. `,
      `${e.tables.length} decode tables, ${e.blocks.length} block ops on the golden inputs.`),
    h("h3", {}, "Unary conversions ", h("small", {}, "all 2^32 float32 inputs, compared through the exhaustive digests")),
    table("eco-unary", ["format", "implementation, function, date · build", "conforms to", "against the canonical profile", "where they differ"], e.unary.map(ecoUnaryRow)),
    h("h3", {}, "Tables ", h("small", {}, "every code")),
    table("eco-tables", ["op", "implementation, function, date · build", "reproduced by", "against the reference"], e.tables.map(ecoTableRow)),
    h("h3", {}, "Block ops ", h("small", {}, "the golden inputs of the suite, certified; one group per suite")),
    h("div", { id: "eco-blocks" }, ecoBlockGroups(e.blocks, table)),
    h("p", { class: "note" }, "Generated by ", h("code", {}, "go run ./cmd/bitexact ecosystem"), " from the records; docs/ecosystem.md has the same rows and the command that reproduces each record."));
}

// ---- wiring ----------------------------------------------------------------

// The state of every view lives in the URL's query, so a link reproduces
// what is on screen: each parameter is an input's or a select's value,
// left out while it holds the page's default.
const urlState = [
  ["v", "value-input"], ["b", "block-input"], ["nv", "nv-recipe"], ["mx", "mx-mode"], ["mxp", "mx-profile"],
  ["w", "awq-input"], ["q", "awq-quantizer"], ["s", "sp-input"], ["tie", "sp-tie"],
];
const defaults = {};

function saveURL() {
  const q = new URLSearchParams();
  for (const [k, id] of urlState) if ($(id).value !== defaults[id]) q.set(k, $(id).value);
  const qs = q.toString();
  const url = location.pathname + (qs ? "?" + qs : "") + location.hash;
  if (url !== location.pathname + location.search + location.hash) history.replaceState(null, "", url);
}

// loadURL fills the inputs from the URL. A select keeps its default when
// the URL names an option it does not have; the message says so.
function loadURL() {
  const q = new URLSearchParams(location.search), bad = [];
  for (const [k, id] of urlState) {
    if (!q.has(k)) continue;
    const el = $(id), v = q.get(k);
    if (el.tagName === "SELECT" && !Array.from(el.options).some((o) => o.value === v)) bad.push(`${k}=${v}`);
    else el.value = v;
  }
  return bad;
}

const timers = {};

function wire(name, run, ...inputs) {
  const go = () => { clearTimeout(timers[name]); return view(name, run).then(saveURL); };
  $(`${name}-form`).addEventListener("submit", (e) => { e.preventDefault(); go(); });
  for (const id of inputs) $(id).addEventListener("change", go);
  // Live update as one types, once the typing pauses.
  $(`${name}-input`).addEventListener("input", () => {
    clearTimeout(timers[name]);
    timers[name] = setTimeout(go, name === "value" ? 250 : 500);
  });
  return go;
}

async function copyLink() {
  saveURL();
  const btn = $("copy-link"), out = $("link-out");
  btn.dataset.copied = location.href;
  out.value = location.href;
  try {
    await navigator.clipboard.writeText(location.href);
    $("link-note").textContent = "link copied";
  } catch {
    // No clipboard (an insecure origin, a denied permission): show the
    // link selected, for Ctrl-C.
    out.hidden = false;
    out.select();
    $("link-note").textContent = "copy the selected link";
  }
}

async function main() {
  const status = $("status");
  try {
    meta = await (await fetch("meta.json")).json();
    ref = await Reference.load(meta.module.file || "refimpl.wasm");
  } catch (e) {
    status.textContent = `Could not start the reference module: ${e.message}`;
    status.className = "error";
    document.body.dataset.state = "failed";
    return;
  }
  // For the browser console: bitexact.ref.run("e2m1.encode", {}, {...}).
  globalThis.bitexact = { ref, meta };
  let digest = "";
  if (globalThis.crypto && crypto.subtle) {
    const d = new Uint8Array(await crypto.subtle.digest("SHA-256", ref.bytes));
    digest = Array.from(d, (b) => hex(b, 2)).join("");
  }
  const same = digest === meta.module.sha256;
  status.replaceChildren(
    "Running refimpl.wasm (", `${meta.module.bytes} bytes, built by ${meta.module.goVersion}`, ") in this page. sha256 ",
    h("code", { id: "digest" }, digest || meta.module.sha256),
    digest ? (same ? " — the module the golden data is generated with." : h("b", { class: "bad" }, " does not match the served digest!")) : "");

  $("nv-recipe-slot").replaceWith(selectOf("nv-recipe", meta.nvfp4Recipes, "NVFP4 recipe"));
  $("mx-mode-slot").replaceWith(selectOf("mx-mode", meta.mxScaleModes, "E8M0 scale rounding"));
  $("mx-profile-slot").replaceWith(selectOf("mx-profile", meta.fp4Profiles, "E2M1 element profile"));
  $("awq-quantizer-slot").replaceWith(selectOf("awq-quantizer", meta.awqQuantizers, "AWQ quantizer"));
  $("sp-tie-slot").replaceWith(selectOf("sp-tie", meta.tieRules, "2:4 tie rule"));
  for (const [id, op] of [["value-ops", ["e2m1.decode", "fp8.decode", "e8m0.decode", "bf16.decode", "fp16.decode"]],
    ["block-ops", ["nvfp4.quantize", "mxfp4.quantize"]], ["awq-ops", ["awq.quantize", "awq.pack"]], ["sp-ops", ["sparse24.select", "sparse24.compress"]]]) {
    $(id).replaceChildren(...op.map((o) => h("li", {}, h("code", {}, o), meta.ops[o] ? `: ${meta.ops[o].doc}` : "")));
  }
  for (const [, id] of urlState) defaults[id] = $(id).value;
  const badURL = loadURL();

  goValue = wire("value", showValue);
  const goBlock = wire("block", showBlock, "nv-recipe", "mx-mode", "mx-profile");
  const goAWQ = wire("awq", showAWQ, "awq-quantizer");
  const go24 = wire("sp", show24, "sp-tie");
  $("rand16").addEventListener("click", () => { $("block-input").value = randomBlock(16); goBlock(); });
  $("rand32").addEventListener("click", () => { $("block-input").value = randomBlock(32); goBlock(); });
  for (const b of document.querySelectorAll("[data-example]")) b.addEventListener("click", () => setValue(b.dataset.example));
  // Bits flip, steps and neighbours go to another code or pattern.
  $("value").addEventListener("click", (e) => {
    const b = e.target.closest("button[data-goto], button[data-bit]");
    if (!b) return;
    if (b.dataset.goto) { setValue(b.dataset.goto); return; }
    const bit = Number(b.dataset.bit), target = b.dataset.target, code = Number(b.dataset.of);
    if (target === "f32") setValue("0x" + hex((code ^ (2 ** bit)) >>> 0, 8));
    else {
      const fmt = meta.formats.find((f) => f.name === target);
      setValue(`${fmt.name}:0x${hex(code ^ (1 << bit), byDigits(fmtWidth(fmt)))}`);
    }
  });
  $("copy-link").addEventListener("click", copyLink);
  // A link of the ecosystem view shows its input in the value view; the
  // href (a full URL state) serves a new tab or a copied link.
  $("ecosystem").addEventListener("click", (e) => {
    const a = e.target.closest("a.eco-link");
    if (!a || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    location.hash = "value";
    setValue(a.dataset.input);
  });
  await Promise.all([goValue(), goBlock(), goAWQ(), go24(), view("ecosystem", showEcosystem)]);
  if (badURL.length) status.append(h("span", { class: "bad" }, ` The link's ${badURL.join(", ")} is not an option here; the default is shown.`));
  for (const f of document.querySelectorAll("fieldset[disabled]")) f.disabled = false;
  $("copy-link").disabled = false;
  document.body.dataset.state = "ready";
  // The views above have grown since the browser scrolled to the URL's
  // #view: scroll there again.
  const target = location.hash.length > 1 && document.getElementById(location.hash.slice(1));
  if (target && target.tagName === "SECTION") target.scrollIntoView();
}

main();
