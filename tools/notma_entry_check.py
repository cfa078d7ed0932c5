#!/usr/bin/env python3
"""tools/notma_entry_check.py: the CLI's two-entry PTX (--tma-fallback=entry, the default) against
the one-form files it is made of (docs/cli.md "Two entries").

  notma_entry_check.py ENTRY.ptx FORM.ptx NOTMA.ptx...

ENTRY.ptx: the default output; FORM.ptx: --tma-fallback=form of the same file and options;
NOTMA.ptx: for each ENTRY__notma of ENTRY.ptx, in order, --tma-fallback=notma --kernel=K
--entry-name=ENTRY__notma.  Checks: ENTRY.ptx less its __notma entries is FORM.ptx byte for byte
(tl_smem's alignment line aside when a second entry asks for more), and each __notma entry is its
NOTMA.ptx's entry up to what the merge renumbers (labels $L__BB<fn>_, $L__tmp<k>) and the unread
tensor-map parameters it declares.  Prints one line per entry; exit 1 on a difference."""
import re
import sys

GLOBL = "\t// .globl\t"
TRAILER = "\t.section\t.debug_loc"


def blocks(text):
    """header, [(name, body)], trailer: the module split at its .globl lines."""
    tr = text.find("\n" + TRAILER)
    trailer = text[tr + 1:] if tr >= 0 else ""
    body = text[:tr + 1] if tr >= 0 else text
    parts = body.split(GLOBL)
    out = []
    for p in parts[1:]:
        name = p.split("\n", 1)[0]
        out.append((name, GLOBL + p))
    return parts[0], out, trailer


def norm(entry):
    entry = re.sub(r"\$L__BB\d+_", "$L__BB_", entry)
    entry = re.sub(r"\$L__tmp\d+", "$L__tmp", entry)
    entry = re.sub(r"(func_begin|func_end|__local_depot)\d+", r"\1", entry)
    lines = []
    for ln in entry.split("\n"):
        if ln.startswith(".extern .shared ") or ln.startswith("\t// tilec: no-TMA entry of "):
            continue
        if re.match(r"\s*\.param \.align 64 \.b8 \w+_param_\d+\[128\],?$", ln):
            continue  # the unread tensor maps
        lines.append(ln.rstrip(","))
    while lines and lines[1:2] == [""] and lines[0].startswith(GLOBL):
        del lines[1]
    return "\n".join(lines)


def main():
    entry_ptx, form_ptx, notmas = sys.argv[1], sys.argv[2], sys.argv[3:]
    e = open(entry_ptx).read()
    f = open(form_ptx).read()
    head, ents, trailer = blocks(e)
    firsts = [b for n, b in ents if not n.endswith("__notma")]
    seconds = [(n, b) for n, b in ents if n.endswith("__notma")]
    ok = True
    rebuilt = head + "".join(firsts) + trailer
    if rebuilt != f:
        # tl_smem's alignment may be the larger of a second entry
        fix = re.sub(r"\.extern \.shared \.align \d+ ", ".extern .shared .align N ", rebuilt)
        same = fix == re.sub(r"\.extern \.shared \.align \d+ ", ".extern .shared .align N ", f)
        print("first entries: %s" % ("identical but tl_smem's alignment" if same else "DIFFERENT from " + form_ptx))
        ok = ok and same
    else:
        print("first entries (%d): byte-identical to %s" % (len(firsts), form_ptx))
    if len(seconds) != len(notmas):
        print("%d __notma entries, %d NOTMA files given" % (len(seconds), len(notmas)))
        return 1
    for (name, b), path in zip(seconds, notmas):
        _, nb, _ = blocks(open(path).read())
        if len(nb) != 1 or nb[0][0] != name:
            print("%s: %s has no single entry of that name" % (name, path))
            ok = False
            continue
        same = norm(b) == norm(nb[0][1])
        print("%s: %s %s (up to label numbers and its unread maps)" % (name, "identical to" if same else "DIFFERENT from", path))
        ok = ok and same
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
