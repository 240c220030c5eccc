#!/usr/bin/env python3
"""check.py OUTDIR - verify what generate.sh produced; exit 1 naming each
failed check.

Checks, in order:
  objects    every jit/NAME.meta has a NAME.elf, and each section the .meta
             lists has the same address and size in the .elf's section
             headers (sh_addr = load address)
  layout     in the MAPPED_LIBRARIES of every profile and in maps.txt, an
             anonymous r-xp mapping ends exactly where libleaf.so's r-xp
             mapping starts, and every executable JIT section lies in an
             anonymous r-xp mapping
  stacks     cpu.prof, heap.prof and heap_sample.prof have samples at
             addresses inside executable JIT sections, with JIT callers of
             JIT code, JIT callers of libleaf and (CPU) libleaf callers of
             JIT code
  symbols    llvm-symbolizer --obj=jit/NAME.elf maps sampled JIT addresses
             to functions of workload.c with a line number; CPU samples
             spread over >= 5 JIT functions (>= 1% of the samples each as
             the leaf frame) and >= 3 libleaf functions (>= 0.5% each:
             leaf_mix64 has 2 to 3% of a run's 600 to 900 samples, but
             one run in CI had 4 of 583)

With --summary it also prints per-function sample counts and a few example
addresses with their llvm-symbolizer --inlining output.
"""

import argparse
import collections
import glob
import json
import os
import re
import struct
import subprocess
import sys

SHF_EXECINSTR = 0x4
PT_LOAD = 1


class Failures:
    def __init__(self):
        self.items = []

    def check(self, ok, what):
        if not ok:
            self.items.append(what)
        return ok


def elf_sections(path):
    """Section headers of an ELF64 little-endian file as dicts."""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError(f"{path}: not an ELF64 little-endian file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    raw = []
    for i in range(shnum):
        raw.append(struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize))
    stroff = raw[shstrndx][4]

    def name(off):
        end = data.index(b"\0", stroff + off)
        return data[stroff + off:end].decode()

    return [dict(name=name(r[0]), type=r[1], flags=r[2], addr=r[3], size=r[5])
            for r in raw]


def elf_loads(path):
    """PT_LOAD program headers as (offset, vaddr, filesz)."""
    data = open(path, "rb").read()
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    out = []
    for i in range(phnum):
        p_type, _, p_off, p_vaddr, _, p_filesz, _, _ = struct.unpack_from(
            "<IIQQQQQQ", data, phoff + i * phentsize)
        if p_type == PT_LOAD:
            out.append((p_off, p_vaddr, p_filesz))
    return out


MAPS_RE = re.compile(
    r"^([0-9a-f]+)-([0-9a-f]+)\s+(\S+)\s+([0-9a-f]+)\s+\S+\s+(\d+)\s*(.*)$")


def parse_maps(text):
    out = []
    for line in text.splitlines():
        m = MAPS_RE.match(line.strip())
        if m:
            out.append(dict(start=int(m[1], 16), end=int(m[2], 16), perms=m[3],
                            offset=int(m[4], 16), inode=int(m[5]),
                            path=m[6].strip()))
    return out


def parse_cpu(path):
    """Legacy gperftools CPU profile: header, (count, depth, pcs...)*, trailer,
    then the text of /proc/self/maps."""
    data = open(path, "rb").read()

    def word(i):
        return struct.unpack_from("<Q", data, 8 * i)[0]

    if [word(0), word(1), word(2), word(4)] != [0, 3, 0, 0]:
        raise ValueError(f"{path}: bad CPU profile header")
    period = word(3)
    samples, i = [], 5
    while True:
        count, depth = word(i), word(i + 1)
        if count == 0 and depth == 1 and word(i + 2) == 0:
            i += 3
            break
        pcs = [word(i + 2 + k) for k in range(depth)]
        samples.append((count, pcs))
        i += 2 + depth
    return period, samples, data[8 * i:].decode()


HEAP_SAMPLE_RE = re.compile(
    r"^\s*(\d+):\s*(\d+)\s*\[\s*(\d+):\s*(\d+)\s*\]\s*@((?:\s+0x[0-9a-f]+)+)\s*$")


def parse_heap(path):
    """Text heap profile: header line, sample lines, MAPPED_LIBRARIES."""
    text = open(path).read()
    body, sep, maps = text.partition("\nMAPPED_LIBRARIES:\n")
    if not sep:
        raise ValueError(f"{path}: no MAPPED_LIBRARIES section")
    lines = body.splitlines()
    header, samples, bad = lines[0], [], []
    for line in lines[1:]:
        if not line.strip():
            continue
        m = HEAP_SAMPLE_RE.match(line)
        if not m:
            bad.append(line)
            continue
        values = tuple(int(m[k]) for k in range(1, 5))
        samples.append((values, [int(x, 16) for x in m[5].split()]))
    return header, samples, bad, maps


class Space:
    """Classifies addresses: JIT section, libleaf, other."""

    def __init__(self, jit_exec, maps):
        self.jit = sorted(jit_exec, key=lambda s: s["start"])
        self.maps = maps

    def jit_section(self, pc):
        for s in self.jit:
            if s["start"] <= pc < s["start"] + s["size"]:
                return s
        return None

    def mapping(self, pc):
        for m in self.maps:
            if m["start"] <= pc < m["end"]:
                return m
        return None

    def kind(self, pc):
        if self.jit_section(pc):
            return "J"
        m = self.mapping(pc)
        if m and "x" in m["perms"] and m["path"].endswith("/libleaf.so"):
            return "L"
        return "O"


def check_layout(f, what, maps, jit_exec):
    """The anonymous r-xp mapping right below libleaf's r-xp mapping."""
    leaf = [m for m in maps if m["perms"] == "r-xp"
            and m["path"].endswith("/libleaf.so")]
    if not f.check(len(leaf) == 1, f"layout: {what}: no single libleaf.so r-xp mapping"):
        return None
    leaf = leaf[0]
    below = [m for m in maps if m["end"] == leaf["start"]]
    ok = f.check(len(below) == 1 and below[0]["perms"] == "r-xp"
                 and below[0]["inode"] == 0 and below[0]["path"] == "",
                 f"layout: {what}: no anonymous r-xp mapping ends at libleaf.so's "
                 f"r-xp start {leaf['start']:#x}")
    # pprof keeps only executable mappings; the JIT region must be the one
    # listed right before libleaf there.
    execs = [m for m in maps if "x" in m["perms"]]
    idx = execs.index(leaf)
    f.check(ok and idx > 0 and execs[idx - 1] is below[0],
            f"layout: {what}: JIT region is not libleaf's predecessor among "
            f"executable mappings")
    anon_x = [m for m in maps if m["perms"] == "r-xp" and m["inode"] == 0
              and m["path"] == ""]
    for s in jit_exec:
        inside = any(m["start"] <= s["start"] and s["start"] + s["size"] <= m["end"]
                     for m in anon_x)
        f.check(inside, f"layout: {what}: JIT section {s['name']} of {s['elf']} "
                        f"at {s['start']:#x} is not inside an anonymous r-xp mapping")
    if ok:
        return below[0], leaf
    return None


def load_objects(f, out):
    metas = sorted(glob.glob(os.path.join(out, "jit", "*.meta")))
    f.check(len(metas) >= 2, f"objects: expected >= 2 jit/*.meta, found {len(metas)}")
    jit_exec = []
    for meta in metas:
        elf = meta[:-len(".meta")] + ".elf"
        if not f.check(os.path.exists(elf), f"objects: {meta} has no .elf"):
            continue
        listed = json.load(open(meta))["sections"]
        sections = {s["name"]: s for s in elf_sections(elf)}
        f.check(len(listed) > 0, f"objects: {meta} lists no sections")
        for s in listed:
            h = sections.get(s["name"])
            f.check(h is not None and h["addr"] == s["start"] and h["size"] == s["size"]
                    and s["start"] != 0,
                    f"objects: {meta}: section {s['name']} start/size disagree "
                    f"with the .elf section header")
            if h is not None and h["flags"] & SHF_EXECINSTR and s["size"] > 0:
                jit_exec.append(dict(name=s["name"], start=s["start"],
                                     size=s["size"], elf=elf))
        for name, h in sections.items():
            if h["flags"] & SHF_EXECINSTR and h["size"] > 0:
                f.check(any(s["name"] == name for s in listed),
                        f"objects: {meta} misses executable section {name}")
    f.check(len(jit_exec) > 0, "objects: no executable JIT sections")
    return jit_exec


def symbolize(symbolizer, obj, addrs, inlining=False):
    """llvm-symbolizer over many addresses in one process; returns
    {addr: [frames, innermost first]}."""
    addrs = sorted(set(addrs))
    if not addrs:
        return {}
    cmd = [symbolizer, "--output-style=JSON", f"--obj={obj}"]
    cmd.append("--inlining" if inlining else "--no-inlines")
    res = subprocess.run(cmd, input="".join(f"{a:#x}\n" for a in addrs),
                         capture_output=True, text=True, check=True)
    out = {}
    for line in res.stdout.splitlines():
        if line.strip():
            r = json.loads(line)
            out[int(r["Address"], 16)] = r.get("Symbol", [])
    return out


def leaf_vaddr(pc, m, loads):
    """File address in libleaf.so of a PC in its mapping m."""
    off = pc - m["start"] + m["offset"]
    for p_off, p_vaddr, p_filesz in loads:
        if p_off <= off < p_off + p_filesz:
            return off - p_off + p_vaddr
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--symbolizer", default="llvm-symbolizer-14")
    ap.add_argument("--min-cpu-samples", type=int, default=500)
    ap.add_argument("--summary", action="store_true")
    ap.add_argument("--no-layout", action="store_true",
                    help="skip the layout checks: an ORC run leaves code where LLVM puts it")
    args = ap.parse_args()
    out, f = args.out, Failures()
    workload_src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     "workload.c")).read()

    jit_exec = load_objects(f, out)

    maps_txt = parse_maps(open(os.path.join(out, "maps.txt")).read())
    if not args.no_layout:
        check_layout(f, "maps.txt", maps_txt, jit_exec)

    # Profiles: (name, samples as (weight, pcs, leaf_is_exact), maps).
    profiles = []
    period, cpu, cpu_maps = parse_cpu(os.path.join(out, "cpu.prof"))
    f.check(period > 0, "cpu.prof: zero sampling period")
    profiles.append(("cpu.prof", [(c, pcs, True) for c, pcs in cpu], parse_maps(cpu_maps)))
    for name, tag in (("heap.prof", "@ heapprofile"), ("heap_sample.prof", "@ heap_v2/")):
        header, samples, bad, maps = parse_heap(os.path.join(out, name))
        f.check(header.startswith("heap profile:") and tag in header,
                f"{name}: header {header!r} lacks {tag!r}")
        f.check(not bad, f"{name}: {len(bad)} unparsable sample lines, e.g. {bad[:1]}")
        # Weight by objects: in-use for heap.prof, sampled for heap_sample.
        profiles.append((name, [(v[0] or v[2], pcs, False) for v, pcs in samples],
                         parse_maps(maps)))

    for name, samples, maps in profiles:
        if not args.no_layout:
            check_layout(f, name, maps, jit_exec)
        space = Space(jit_exec, maps)
        kinds = ["".join(space.kind(pc) for pc in pcs) for _, pcs, _ in samples]
        total = sum(w for w, _, _ in samples)
        with_jit = sum(w for (w, _, _), k in zip(samples, kinds) if "J" in k)
        f.check(with_jit > 0, f"stacks: {name}: no sample has a JIT address")
        f.check(any("JJ" in k for k in kinds),
                f"stacks: {name}: no JIT frame with a JIT caller")
        if name != "heap_sample.prof":
            f.check(any("LJ" in k for k in kinds),
                    f"stacks: {name}: no libleaf frame with a JIT caller")
        if name == "cpu.prof":
            f.check(total >= args.min_cpu_samples,
                    f"stacks: cpu.prof: {total} samples, want >= {args.min_cpu_samples}")
            f.check(with_jit * 2 >= total,
                    f"stacks: cpu.prof: only {with_jit} of {total} samples touch JIT code")
            f.check(any("JL" in k for k in kinds),
                    f"stacks: cpu.prof: no JIT frame called back from libleaf")
        print(f"check.py: {name}: {len(samples)} stacks, weight {total}, "
              f"{with_jit} with JIT frames", file=sys.stderr)

    # Symbolize every JIT PC (return addresses minus one) per object.
    by_elf = collections.defaultdict(set)
    cpu_space = Space(jit_exec, profiles[0][2])
    for name, samples, maps in profiles:
        space = Space(jit_exec, maps)
        for _, pcs, exact in samples:
            for i, pc in enumerate(pcs):
                s = space.jit_section(pc)
                if s:
                    by_elf[s["elf"]].add(pc if exact and i == 0 else pc - 1)
    names, no_line = {}, []
    for elf, addrs in by_elf.items():
        for addr, frames in symbolize(args.symbolizer, elf, addrs).items():
            fr = frames[0] if frames else {}
            fn, file, line = fr.get("FunctionName", ""), fr.get("FileName", ""), fr.get("Line", 0)
            ok = (fn and file.endswith("workload.c")
                  and re.search(r"\b" + re.escape(fn) + r"\(", workload_src))
            f.check(ok, f"symbols: {os.path.basename(elf)} {addr:#x} -> "
                        f"{fn or '??'} {file or '??'}:{line}")
            names[addr] = fn
            if line == 0:  # DWARF's "no source line", e.g. after some calls
                no_line.append(addr)
    f.check(len(no_line) * 10 <= len(names),
            f"symbols: {len(no_line)} of {len(names)} JIT addresses have no line")

    # Flat (leaf-frame) CPU profile by function.
    leaf_m = [m for m in profiles[0][2] if m["perms"] == "r-xp"
              and m["path"].endswith("/libleaf.so")]
    leaf_bin = os.path.join(out, "bin", "libleaf.so")
    if not os.path.exists(leaf_bin) and leaf_m:
        leaf_bin = leaf_m[0]["path"]  # a run outside generate.sh
    jit_flat, leaf_flat = collections.Counter(), collections.Counter()
    leaf_pcs = {}
    for c, pcs in cpu:
        pc = pcs[0]
        k = cpu_space.kind(pc)
        if k == "J":
            jit_flat[names.get(pc, "??")] += c
        elif k == "L" and leaf_m:
            leaf_pcs[pc] = leaf_vaddr(pc, leaf_m[0], elf_loads(leaf_bin))
    leaf_syms = symbolize(args.symbolizer, leaf_bin,
                          [v for v in leaf_pcs.values() if v is not None])
    for c, pcs in cpu:
        v = leaf_pcs.get(pcs[0])
        if v is not None:
            fr = leaf_syms.get(v) or [{}]
            leaf_flat[fr[0].get("FunctionName", "??")] += c
    total = sum(c for c, _ in cpu)
    busy_jit = [n for n, c in jit_flat.items() if c * 100 >= total]
    busy_leaf = [n for n, c in leaf_flat.items() if c * 200 >= total and n.startswith("leaf_")]
    f.check(len(busy_jit) >= 5,
            f"symbols: cpu.prof: only {len(busy_jit)} JIT functions with >= 1% of "
            f"samples as leaf frame: {dict(jit_flat)}")
    f.check(len(busy_leaf) >= 3,
            f"symbols: cpu.prof: only {len(busy_leaf)} libleaf functions with >= 0.5% "
            f"of samples as leaf frame: {dict(leaf_flat)}")

    if args.summary:
        print(f"cpu.prof: {total} samples, period {period} us")
        print("JIT leaf functions:", ", ".join(f"{n} {c}" for n, c in jit_flat.most_common()))
        print("libleaf leaf functions:", ", ".join(f"{n} {c}" for n, c in leaf_flat.most_common()))
        seen = set()
        for c, pcs in sorted(cpu, key=lambda s: -s[0]):
            s = cpu_space.jit_section(pcs[0])
            fn = names.get(pcs[0])
            if s and fn not in seen and len(seen) < 5:
                seen.add(fn)
                frames = symbolize(args.symbolizer, s["elf"], [pcs[0]], inlining=True)[pcs[0]]
                print(f"\n$ llvm-symbolizer --inlining --obj=jit/{os.path.basename(s['elf'])} "
                      f"{pcs[0]:#x}   # section {s['name']}, {c} samples")
                for fr in frames:
                    print(f"{fr['FunctionName']}\n{fr['FileName']}:{fr['Line']}:{fr['Column']}")

    if f.items:
        for item in f.items:
            print(f"check.py: FAILED {item}", file=sys.stderr)
        sys.exit(1)
    print(f"check.py: all checks passed for {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
