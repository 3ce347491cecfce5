"""Method 1: answers from my own tokenizer/scanner (rsparse)."""
import re, os, functools
import rsparse
from rsparse import REG, IDENT

CRATES = {
    'adler': 'adler-1.0.2', 'ahash': 'ahash-0.7.6', 'crc32fast': 'crc32fast-1.3.2', 'flate2': 'flate2-1.0.25',
    'miniz_oxide': 'miniz_oxide-0.6.2', 'owning_ref': 'owning_ref-0.4.1', 'socket2': 'socket2-0.4.4',
    'tiny-keccak': 'tiny-keccak-2.0.2', 'valuable': 'valuable-0.1.0', 'quickcheck': 'quickcheck-1.0.3',
    'rustc-demangle': 'rustc-demangle-0.1.21'}


def src_dir(crate):
    return os.path.join(REG, CRATES[crate], 'src')


@functools.lru_cache(None)
def scan(crate, rel):
    return rsparse.scan(os.path.join(src_dir(crate), rel))


def files(crate, under='.'):
    root = src_dir(crate)
    out = rsparse.rs_files(os.path.join(root, under))
    return [os.path.normpath(os.path.join(under, f)) for f in out]


def items(crate, rel, kw=None, name=None, include_test=True, include_macro=False):
    r = scan(crate, rel)
    out = []
    for it in r['items']:
        if kw and it['kw'] != kw:
            continue
        if name and it.get('name') != name:
            continue
        if not include_test and it['cfg_test']:
            continue
        if not include_macro and it['in_macro_rules']:
            continue
        out.append(it)
    return out


def fn_sig(crate, rel, name, impl_type=None):
    c = [it for it in items(crate, rel, 'fn', name)
         if impl_type is None or (it['parent'] and it['parent']['kw'] == 'impl' and it['parent']['type'] == impl_type)]
    assert len(c) == 1, (name, len(c))
    return c[0]['sig']


def split_top(s, sep=','):
    parts = []; d = 0; cur = ''
    i = 0
    while i < len(s):
        ch = s[i]
        if s.startswith('->', i):
            cur += '->'; i += 2; continue
        if ch in '<([{':
            d += 1
        elif ch in '>)]}':
            d -= 1
        if ch == sep and d == 0:
            parts.append(cur); cur = ''
        else:
            cur += ch
        i += 1
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def strip_attrs(s):
    return re.sub(r'#\[[^\]]*\]', '', s).strip()


def body_text(crate, rel, it, which='nocom'):
    r = scan(crate, rel)
    b0, b1 = it['body']
    return r[which][b0 + 1:b1]


def struct_fields(crate, rel, name, with_types=False):
    c = [it for it in items(crate, rel, 'struct', name)]
    assert len(c) == 1
    body = body_text(crate, rel, c[0])
    out = []
    for p in split_top(body):
        p = strip_attrs(re.sub(r'\s+', ' ', p))
        p = re.sub(r'^pub(\([^)]*\))?\s+', '', p)
        n, t = p.split(':', 1)
        out.append(f'{n.strip()}: {t.strip()}' if with_types else n.strip())
    return out


def enum_variants(crate, rel, name):
    c = [it for it in items(crate, rel, 'enum', name)]
    assert len(c) == 1, len(c)
    body = body_text(crate, rel, c[0])
    out = []
    for p in split_top(body):
        p = strip_attrs(re.sub(r'\s+', ' ', p))
        out.append(re.match(IDENT, p).group(0))
    return out


def impls(crate, rel, include_test=False, include_macro=False):
    return items(crate, rel, 'impl', include_test=include_test, include_macro=include_macro)


def count_unsafe_blocks(crate, rel, include_test=True):
    r = scan(crate, rel)
    clean = r['clean']
    n = 0
    for m in re.finditer(r'\bunsafe\s*\{', clean):
        if not include_test:
            # inside a cfg(test) module?
            mods = [it for it in r['items'] if it['kw'] == 'mod' and it['cfg_test'] and it['body'][0] < m.start() < it['body'][1]]
            if mods:
                continue
        n += 1
    return n


def in_test_region(crate, rel, pos):
    r = scan(crate, rel)
    for it in r['items']:
        if it['cfg_test'] and 'body' in it and it['body'][0] <= pos <= it['body'][1]:
            return True
    return False


def in_macro_region(crate, rel, pos):
    r = scan(crate, rel)
    return any(a <= pos <= b for a, b, _, _ in r['macro_ranges'])
