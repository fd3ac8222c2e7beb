// The demo page. Every code, scale, packed byte and value shown comes from
// the reference module (abi.js); this file reads inputs, asks the module,
// and lays out what it answers.

import { Reference, OpError, u8, tensor, asF32, asU16, asU32 } from "./abi.js";
import { parseF32, fmtF32, exactDecimal, f32value, hex } from "./float32.js";

let ref, meta;

// ---- DOM helpers -----------------------------------------------------------

function h(tag, attrs = {}, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("data-") || k === "title" || k === "id" || k === "for" || k === "role") el.setAttribute(k, v);
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

// values reads whitespace- or comma-separated VALUEs as float32 bits.
function values(text) {
  // Separators: white space, commas, semicolons, and the brackets of a
  // pasted Python or JSON list.
  const parts = text.split(/[\s,;()[\]]+/).filter((s) => s !== "");
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

// ---- View 1: a value under every profile -----------------------------------

const decodeTables = {};

// decodeTable decodes every code of a format through the format's decode
// op, once: the codes' values, and the representable values in order.
async function decodeTable(fmt) {
  if (decodeTables[fmt.name]) return decodeTables[fmt.name];
  const width = fmt.fields[0] + fmt.fields[1] + fmt.fields[2];
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
  return { below, equal, above };
}

function bitsCell(fmt, code) {
  const [s, e, m] = fmt.fields;
  return h("td", { class: "bits" },
    s ? h("span", { class: "f-s", title: "sign" }, bin(code >>> (e + m), s)) : null,
    e ? h("span", { class: "f-e", title: "exponent" }, bin((code >>> m) & ((1 << e) - 1), e)) : null,
    m ? h("span", { class: "f-m", title: "mantissa" }, bin(code & ((1 << m) - 1), m)) : null);
}

async function showValue() {
  const text = $("value-input").value;
  let x;
  try { x = parseF32(text); } catch (e) { throw new InputError(e.message); }
  const xv = f32value(x);
  // x's own fields: float32 is the input of every conversion (IEEE 754
  // binary32: 1 sign, 8 exponent, 23 mantissa bits).
  const f32fields = h("span", { class: "bits" }, h("span", { class: "f-s" }, bin(x >>> 31, 1)), " ",
    h("span", { class: "f-e" }, bin((x >>> 23) & 0xff, 8)), " ", h("span", { class: "f-m" }, bin(x & 0x7fffff, 23)));
  const head = h("p", { class: "xline" },
    "x = ", h("b", {}, text.trim()), " → float32 ", h("code", { id: "value-bits" }, hx(x, 8)), " ", f32fields,
    h("br"), h("span", { class: "exact", id: "value-exact" }, "exactly ", exactDecimal(x)));
  const blocks = [head];
  for (const fmt of meta.formats) {
    const convs = meta.conversions.filter((c) => c.format === fmt.name);
    const table = await decodeTable(fmt);
    const rows = [];
    let canon = null, disagree = false;
    for (const c of convs) {
      const code = await ref.encode(c.name, x, c.bits > 8 ? 2 : 1);
      if (canon === null) canon = code;
      const differs = code !== canon;
      disagree ||= differs;
      rows.push(h("tr", { class: differs ? "differs" : "" },
        h("td", { class: "prof" }, c.profile, differs ? h("span", { class: "mark", title: `differs from ${convs[0].profile}` }, " ≠") : null),
        h("td", { class: "code", "data-conv": c.name }, hx(code, byDigits(c.bits))),
        bitsCell(fmt, code),
        h("td", { class: "val" }, fmtF32(table.bits[code])),
        h("td", { class: "src" }, c.source)));
    }
    const nb = xv === xv ? neighbours(table, xv) : null;
    const nbText = (c) => (c === null ? "none" : `${fmtF32(table.bits[c])} (${hx(c, byDigits(convs[0].bits))})`);
    const nbAttr = (c) => (c === null ? "" : hx(c, byDigits(convs[0].bits)));
    const nbLine = nb
      ? h("p", { class: "nb", "data-format": fmt.name },
        "representable neighbours: ", h("span", { class: "nb-below", "data-code": nbAttr(nb.below) }, nbText(nb.below)),
        nb.equal !== null ? [" < ", h("b", { class: "nb-equal", "data-code": nbAttr(nb.equal) }, nbText(nb.equal)), " < "] : " < x < ",
        h("span", { class: "nb-above", "data-code": nbAttr(nb.above) }, nbText(nb.above)))
      : h("p", { class: "nb" }, "x is NaN: no neighbours");
    blocks.push(h("div", { class: "fmt", "data-format": fmt.name },
      h("h3", {}, fmt.name.toUpperCase(), " ",
        h("span", { class: "legend" }, fmt.fields[0] ? h("span", { class: "f-s" }, "sign ") : null,
          h("span", { class: "f-e" }, "exponent "), fmt.fields[2] ? h("span", { class: "f-m" }, "mantissa") : null),
        disagree ? h("span", { class: "disagree" }, "profiles disagree") : null),
      h("table", {}, h("thead", {}, h("tr", {}, ["profile", "code", "bits", "decoded", "source"].map((t) => h("th", {}, t)))),
        h("tbody", {}, rows)),
      nbLine));
  }
  return h("div", {}, blocks);
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
  const d = y - x; // both float32; the float64 difference is exact
  return d === 0 ? "0" : (d > 0 ? "+" : "") + Number(d.toPrecision(3));
};

function plot(xs, series) {
  const W = 560, H = 200, P = 28;
  const all = xs.concat(...series.map((s) => Array.from(s.y))).filter((v) => isFinite(v));
  let lo = Math.min(0, ...all), hi = Math.max(0, ...all);
  if (hi === lo) hi = lo + 1;
  const sx = (i) => P + (i + 0.5) * (W - 2 * P) / xs.length;
  const sy = (v) => H - P - (Math.max(lo, Math.min(hi, v)) - lo) * (H - 2 * P) / (hi - lo);
  const g = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "plot", role: "img" });
  g.append(svgEl("line", { x1: P, x2: W - P, y1: sy(0), y2: sy(0), class: "axis" }));
  g.append(svgEl("text", { x: 2, y: sy(hi) + 4, class: "tick" }, Number(hi.toPrecision(3))));
  g.append(svgEl("text", { x: 2, y: sy(lo) + 4, class: "tick" }, Number(lo.toPrecision(3))));
  xs.forEach((v, i) => g.append(svgEl("line", { x1: sx(i), x2: sx(i), y1: sy(0), y2: sy(v), class: "orig" })));
  for (const s of series) {
    s.y.forEach((v, i) => {
      if (!isFinite(v)) return;
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
  const xb = values($("block-input").value);
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
  return h("div", {},
    h("div", { class: "cols" },
      h("div", {},
        h("h3", {}, "NVFP4 ", h("small", {}, `recipe ${$("nv-recipe").value}: ${sourceOf(meta.nvfp4Recipes, $("nv-recipe").value)}`)),
        h("p", {}, "per-tensor global ", h("code", { id: "nv-global" }, fv(nv.global)), "; E4M3 block scales (16 values each):"),
        h("ul", {}, nvScales),
        h("p", {}, "packed bytes (element 2i in the low nibble): ", bytes("nv-packed", nv.packed))),
      mx ? h("div", {},
        h("h3", {}, "MXFP4 ", h("small", {}, `scale ${$("mx-mode").value}: ${sourceOf(meta.mxScaleModes, $("mx-mode").value)}`)),
        h("p", {}, "E8M0 shared scale (32 values):"), h("ul", {}, mxScales),
        h("p", {}, "packed bytes: ", bytes("mx-packed", mx.packed)))
        : h("div", { class: "note" }, h("h3", {}, "MXFP4"), h("p", {}, "An MXFP4 block is 32 values: give 32 to see it."))),
    plot(xs, series),
    h("table", { class: "blocktab" }, h("thead", {}, head), h("tbody", {}, rows)));
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
  const wb = values($("awq-input").value);
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
    h("table", {}, h("thead", {}, h("tr", {}, ["column", "w (fp16)", "scale", "zero z", "stored u", "dequantized (u − z)·s"].map((t) => h("th", {}, t)))),
      h("tbody", {}, colRows)));
}

// ---- View 4: 2:4 sparsity --------------------------------------------------

async function show24() {
  const xb = values($("sp-input").value);
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
        xb[4 * g + j] !== v ? h("div", { class: "cell-x" }, `from ${fmtF32(xb[4 * g + j])}`) : null);
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

// ---- wiring ----------------------------------------------------------------

function wire(name, run, ...inputs) {
  const go = () => view(name, run);
  $(`${name}-form`).addEventListener("submit", (e) => { e.preventDefault(); go(); });
  for (const id of inputs) $(id).addEventListener("change", go);
  return go;
}

async function main() {
  const status = $("status");
  try {
    meta = await (await fetch("meta.json")).json();
    ref = await Reference.load("refimpl.wasm");
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

  const goValue = wire("value", showValue);
  const goBlock = wire("block", showBlock, "nv-recipe", "mx-mode", "mx-profile");
  wire("awq", showAWQ, "awq-quantizer");
  const go24 = wire("sp", show24, "sp-tie");
  $("rand16").addEventListener("click", () => { $("block-input").value = randomBlock(16); goBlock(); });
  $("rand32").addEventListener("click", () => { $("block-input").value = randomBlock(32); goBlock(); });
  for (const b of document.querySelectorAll("[data-example]")) {
    b.addEventListener("click", () => { $("value-input").value = b.dataset.example; goValue(); });
  }
  await Promise.all([goValue(), goBlock(), view("awq", showAWQ), go24()]);
  document.body.dataset.state = "ready";
}

main();
