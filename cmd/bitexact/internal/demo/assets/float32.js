// Reading and printing float32 inputs. This is the page's own input
// handling, not a format of the reference: it turns what a person types into
// the float32 bit pattern handed to the module, the way the CLI's VALUE
// argument does (strconv.ParseFloat(s, 32): correctly rounded, ties to
// even, overflow to infinity), and prints float32 values back.
//
// Math.fround(Number(s)) would round twice (decimal -> float64 -> float32)
// and is wrong for decimals just beside a float32 midpoint, e.g.
// "1.000000059604644775390625001" (above the midpoint 1 + 2^-24, so
// float32 1.0000001, not 1). So the candidate from Number() is checked
// against the midpoints on either side in exact BigInt arithmetic, and
// moved when it is on the wrong side.

const INF_BITS = 0x7f800000;

// parseF32 returns the float32 bit pattern (uint32) of a VALUE, or throws
// an Error saying why the text is not one. Accepted: decimal ("0.75",
// "-1e-3"), hex float ("0x1.8p-1"), "inf", "-inf", "infinity", "nan",
// "-nan" (quiet NaN 0x7fc00000 / 0xffc00000) and "bits:0x7fc00001".
export function parseF32(text) {
  const s = String(text).trim().toLowerCase();
  if (s === "") throw new Error("empty value");
  if (s.length > 400) throw new Error(`value of ${s.length} characters is too long`);
  let m = /^bits:(?:0x)?([0-9a-f]{1,8})$/.exec(s);
  if (m) return parseInt(m[1], 16) >>> 0;
  if (s.startsWith("bits:")) throw new Error(`"${text}" is not a 32-bit hex pattern`);
  if (s === "nan" || s === "+nan") return 0x7fc00000;
  if (s === "-nan") return 0xffc00000;
  m = /^([+-]?)(inf|infinity)$/.exec(s);
  if (m) return (m[1] === "-" ? 0x80000000 : 0) + INF_BITS >>> 0;
  if (s.includes("_")) {
    if (!underscoresOK(s)) throw new Error(`"${text}" is not a number`);
    return parseF32(s.replaceAll("_", ""));
  }

  let neg, N, e2 = 0, e10 = 0, approx;
  if ((m = /^([+-]?)0x([0-9a-f]*)(?:\.([0-9a-f]*))?p([+-]?\d{1,6})$/.exec(s)) && (m[2] + (m[3] || "")).length > 0) {
    const frac = m[3] || "";
    neg = m[1] === "-";
    N = BigInt("0x" + (m[2] + frac || "0"));
    e2 = Number(m[4]) - 4 * frac.length;
    // The top 60 bits are plenty for a first guess (the loop below fixes
    // the last place); shifting keeps Number() finite for long mantissas.
    const shift = Math.max(0, N.toString(2).length - 60);
    approx = Number(N >> BigInt(shift)) * Math.pow(2, e2 + shift);
  } else if ((m = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d{1,6}))?$/.exec(s)) && (m[2] + (m[3] || "")).length > 0) {
    const frac = m[3] || "";
    neg = m[1] === "-";
    N = BigInt((m[2] + frac).replace(/^0+/, "") || "0");
    e10 = Number(m[4] || 0) - frac.length;
    approx = Number(s.replace(/^[+-]/, ""));
  } else {
    throw new Error(`"${text}" is not a number`);
  }
  const sign = neg ? 0x80000000 : 0;
  if (N === 0n) return sign >>> 0;
  // Beyond float64's range the float32 result is settled: 0 below 2^-1075
  // is far under float32's half-smallest 2^-150, Infinity far over 2^128.
  if (approx === 0) return sign >>> 0;
  if (!isFinite(approx)) return (sign + INF_BITS) >>> 0;
  let u = f32bits(Math.fround(approx)) & 0x7fffffff;
  for (let step = 0; step < 4; step++) {
    if (u < INF_BITS) {
      const c = cmp(N, e2, e10, mid(u));
      if (c > 0 || (c === 0 && (u & 1))) { u++; continue; }
    }
    if (u > 0) {
      const c = cmp(N, e2, e10, mid(u - 1));
      if (c < 0 || (c === 0 && (u & 1))) { u--; continue; }
    }
    return (sign + u) >>> 0;
  }
  throw new Error(`internal: could not round "${text}" to float32`);
}

// underscoresOK applies Go's rule for digit separators in literals, which
// strconv.ParseFloat follows: each underscore sits between two digits, or
// between the 0x prefix and a digit.
function underscoresOK(s) {
  const body = s.replace(/^[+-]/, "");
  const hex = body.startsWith("0x");
  const digit = hex ? /[0-9a-f]/ : /[0-9]/;
  for (let i = 0; i < body.length; i++) {
    if (body[i] !== "_") continue;
    const after = (hex && i === 2) || (i > 0 && digit.test(body[i - 1]));
    const before = i + 1 < body.length && digit.test(body[i + 1]);
    if (!after || !before) return false;
  }
  return true;
}

const buf = new DataView(new ArrayBuffer(4));
export function f32bits(v) { buf.setFloat32(0, v); return buf.getUint32(0); }
export function f32value(bits) { buf.setUint32(0, bits >>> 0); return buf.getFloat32(0); }

// exact returns a non-negative float32 magnitude u (bits, < 0x7f800000,
// or 0x7f800000 standing for 2^128) as [M, k] with value M * 2^k.
function exact(u) {
  if (u >= INF_BITS) return [1n, 128];
  const e = u >>> 23, f = u & 0x7fffff;
  return e === 0 ? [BigInt(f), -149] : [BigInt(f | 0x800000), e - 150];
}

// mid is the midpoint between magnitudes u and u+1, as [M, k].
function mid(u) {
  const [a, ka] = exact(u), [b, kb] = exact(u + 1);
  const k = Math.min(ka, kb);
  return [(a << BigInt(ka - k)) + (b << BigInt(kb - k)), k - 1];
}

// cmp compares N * 2^e2 * 10^e10 with M * 2^k.
function cmp(N, e2, e10, [M, k]) {
  let L = N, R = M;
  const d2 = e2 - k;
  if (d2 >= 0) L <<= BigInt(d2); else R <<= BigInt(-d2);
  if (e10 >= 0) L *= 10n ** BigInt(e10); else R *= 10n ** BigInt(-e10);
  return L > R ? 1 : L < R ? -1 : 0;
}

// fmt prints a float32 (given as a JS number holding a float32 value, or
// as bits) in the shortest form that reads back to the same float32,
// keeping the sign of zero; NaN prints with its bit pattern, as the CLI
// prints it.
export function fmtF32(bits) {
  bits >>>= 0;
  const v = f32value(bits);
  if (v !== v) return `${bits >>> 31 ? "-" : ""}NaN(0x${hex(bits, 8)})`;
  if (v === 0) return bits >>> 31 ? "-0" : "0";
  if (!isFinite(v)) return v > 0 ? "+Inf" : "-Inf";
  for (let p = 1; p <= 9; p++) {
    const t = v.toPrecision(p);
    if (parseF32(t) === bits) return String(Number(t));
  }
  return String(v);
}

// exactDecimal prints a finite float32's exact decimal expansion.
export function exactDecimal(bits) {
  bits >>>= 0;
  const u = bits & 0x7fffffff;
  if (u >= INF_BITS) return fmtF32(bits);
  let [M, k] = exact(u);
  const neg = bits >>> 31 ? "-" : "";
  if (k >= 0) return neg + (M << BigInt(k)).toString();
  // M / 2^-k = M * 5^-k / 10^-k
  const digits = (M * 5n ** BigInt(-k)).toString().padStart(-k + 1, "0");
  let int = digits.slice(0, digits.length + k), frac = digits.slice(digits.length + k).replace(/0+$/, "");
  return neg + int + (frac ? "." + frac : "");
}

export function hex(v, width) { return (v >>> 0).toString(16).padStart(width, "0"); }
