"""Summarise ncu --csv --page raw --print-units base output per kernel.

Usage: python3 ncu_summary.py NCU.csv [SKIP]. Drops each kernel's first
SKIP (default 2) launches, the warm-up, and prints the median, min and max
of gpu__time_duration.sum (us) and the median dram__bytes_read.sum (MB).
"""
import csv
import statistics
import sys


def main():
    path = sys.argv[1]
    skip = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(line for line in f if line.startswith('"'))]
    head, data = rows[0], rows[2:]  # rows[1] holds the units
    name, t, dram = head.index("Kernel Name"), head.index("gpu__time_duration.sum"), head.index("dram__bytes_read.sum")
    per = {}
    for r in data:
        per.setdefault(r[name], []).append((float(r[t].replace(",", "")), float(r[dram].replace(",", ""))))
    print("ncu (--cache-control all --clock-control none): kernel, n, median us (min-max), median DRAM MB read")
    for k, v in per.items():
        v = v[skip:]
        ts = sorted(x[0] / 1000 for x in v)
        mb = statistics.median(x[1] for x in v) / 1e6
        short = k.split("(")[0] if "<" not in k else k.split(">")[0] + ">"
        print(f"  {short[:60]:60s} {len(v):3d} {statistics.median(ts):7.2f} ({ts[0]:.2f}-{ts[-1]:.2f})  {mb:6.2f}")


main()
