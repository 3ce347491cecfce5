import sys, os, re, collections
sys.path.insert(0, os.path.dirname(__file__))
from rs import *
root = sys.argv[1]; excl_test = True
rows = []
for dp, dn, fn in os.walk(root):
    for f in sorted(fn):
        if not f.endswith('.rs'): continue
        p = os.path.join(dp, f)
        src, code, regs = load(p)
        for pos, h, u in impls(code):
            t, s = split_impl(h)
            rows.append((os.path.relpath(p, root), lineno(code, pos), t, s, u, in_regs(pos, regs, ('test',)), in_regs(pos, regs, ('macro',)), h))
import json
json.dump(rows, open('/tmp/rows_%s.json' % os.path.basename(root.rstrip('/').replace('/src','')), 'w'))
