"""Method 2: answers from universal-ctags JSON output plus line-oriented grep-style regexes.
Does not use rsparse."""
import json, os, re, functools, subprocess

REG = '/usr/share/cargo/registry'
CRATES = {
    'adler': 'adler-1.0.2', 'ahash': 'ahash-0.7.6', 'crc32fast': 'crc32fast-1.3.2', 'flate2': 'flate2-1.0.25',
    'miniz_oxide': 'miniz_oxide-0.6.2', 'owning_ref': 'owning_ref-0.4.1', 'socket2': 'socket2-0.4.4',
    'tiny-keccak': 'tiny-keccak-2.0.2', 'valuable': 'valuable-0.1.0', 'quickcheck': 'quickcheck-1.0.3',
    'rustc-demangle': 'rustc-demangle-0.1.21'}


def src_dir(crate):
    return os.path.join(REG, CRATES[crate], 'src')


@functools.lru_cache(None)
def tags(crate):
    out = subprocess.run(['ctags', '-R', '--output-format=json', '--fields=+KSzneErt', '--extras=-q', '-o', '-', '.'],
                         cwd=src_dir(crate), capture_output=True, text=True).stdout
    res = []
    for l in out.splitlines():
        d = json.loads(l)
        d['path'] = os.path.normpath(d['path'])
        res.append(d)
    return res


@functools.lru_cache(None)
def lines(crate, rel):
    return open(os.path.join(src_dir(crate), rel), encoding='utf-8').read().split('\n')


def strip_line_comments(crate, rel):
    """Line-oriented comment removal: drop // ... (outside of "..." on the same line) and /* */ spans.
    Returns list of code lines (same numbering)."""
    out = []
    in_block = False
    for l in lines(crate, rel):
        s = ''
        i = 0
        in_str = False
        while i < len(l):
            if in_block:
                j = l.find('*/', i)
                if j < 0:
                    i = len(l); break
                in_block = False; i = j + 2; continue
            ch = l[i]
            if in_str:
                if ch == '\\':
                    s += l[i:i+2]; i += 2; continue
                if ch == '"':
                    in_str = False
                s += ch; i += 1; continue
            if l.startswith('//', i):
                break
            if l.startswith('/*', i):
                in_block = True; i += 2; continue
            if ch == '"':
                in_str = True
            # char literal '"'
            if l.startswith("'\"'", i):
                s += "'\"'"; i += 3; continue
            s += ch; i += 1
        out.append(s)
    return out


def test_line_ranges(crate, rel):
    """line ranges (1-based inclusive) of `#[cfg(test)] mod x {` blocks, by naive brace counting on
    comment-stripped lines (string contents with braces are rare; checked by hand)."""
    code = strip_line_comments(crate, rel)
    ranges = []
    i = 0
    n = len(code)
    while i < n:
        if re.match(r'\s*#\[cfg\(test\)\]\s*$', code[i]):
            j = i + 1
            while j < n and (code[j].strip().startswith('#[') or code[j].strip() == ''):
                j += 1
            if j < n and re.match(r'\s*(pub\s+)?mod\s+\w+\s*\{', code[j]):
                depth = 0
                k = j
                while k < n:
                    depth += code[k].count('{') - code[k].count('}')
                    if depth == 0 and k > j or (depth == 0 and '}' in code[k]):
                        break
                    k += 1
                ranges.append((i + 1, k + 1))
                i = k
        i += 1
    return ranges


def in_ranges(line, ranges):
    return any(a <= line <= b for a, b in ranges)


def macro_line_ranges(crate, rel):
    code = strip_line_comments(crate, rel)
    ranges = []
    for i, l in enumerate(code):
        if re.search(r'\bmacro_rules!\s*\w+', l):
            depth = 0; k = i; started = False
            while k < len(code):
                depth += code[k].count('{') - code[k].count('}')
                if '{' in code[k]:
                    started = True
                if started and depth == 0:
                    break
                k += 1
            ranges.append((i + 1, k + 1))
    return ranges


def ctag(crate, rel=None, kind=None, name=None, scope=None):
    res = []
    for t in tags(crate):
        if rel and t['path'] != os.path.normpath(rel):
            continue
        if kind and t['kind'] != kind:
            continue
        if name and t['name'] != name:
            continue
        if scope and t.get('scope') != scope:
            continue
        res.append(t)
    return res


def sig(crate, rel, name):
    ts = [t for t in ctag(crate, rel, name=name) if t['kind'] in ('function', 'method')]
    assert len(ts) == 1, ts
    t = ts[0]
    line = lines(crate, rel)[t['line'] - 1]
    m = re.match(r'\s*(.*?\bfn\s+' + re.escape(name) + r')', line)
    return re.sub(r'\s+', ' ', m.group(1) + t.get('signature', '')).strip()


def fields(crate, rel, struct):
    return [t['name'] for t in ctag(crate, rel, 'field', scope=struct)]


def field_types(crate, rel, struct):
    out = []
    for t in ctag(crate, rel, 'field', scope=struct):
        l = lines(crate, rel)[t['line'] - 1]
        m = re.match(r'\s*(pub(\([^)]*\))?\s+)?(\w+)\s*:\s*(.*?),?\s*$', l)
        out.append(f'{m.group(3)}: {m.group(4)}')
    return out


def variants(crate, rel, enum):
    return [t['name'] for t in ctag(crate, rel, 'enumerator', scope=enum)]


def impl_header_text(crate, rel, line):
    """join lines from `line` until the first '{' (or ';')."""
    ls = lines(crate, rel)
    s = ''
    k = line - 1
    while True:
        s += ' ' + ls[k]
        if '{' in ls[k]:
            break
        k += 1
    s = s[:s.index('{')]
    return re.sub(r'\s+', ' ', s).strip()


def parse_impl(h):
    """regex-y parse: returns (trait_last_segment or None, type_last_segment)"""
    h = re.sub(r'^(unsafe\s+)?impl', '', h).strip()
    # drop generic params: balanced <...> at start
    if h.startswith('<'):
        d = 0
        for i, ch in enumerate(h):
            if ch == '<': d += 1
            elif ch == '>' and h[i-1] != '-': d -= 1
            if d == 0:
                h = h[i+1:].strip(); break
    h = re.split(r'\swhere\s|\swhere$', h)[0].strip()
    m = re.match(r'(.+?)\s+for\s+(.+)$', h)
    def last(x):
        x = x.strip()
        x = re.sub(r"^&('\w+\s+)?(mut\s+)?", '', x)
        x = re.sub(r'^dyn\s+', '', x)
        x = re.split(r'[<+]', x)[0].strip()
        return x.split('::')[-1]
    if m and not m.group(1).strip().startswith('for<'):
        return last(m.group(1).lstrip('!')), last(m.group(2))
    return None, last(h)


def impls(crate, rel):
    """list of dicts(line, trait, type) from ctags implementation tags"""
    out = []
    for t in ctag(crate, rel, 'implementation'):
        h = impl_header_text(crate, rel, t['line'])
        h = h[h.index('impl') - (7 if h.find('unsafe impl') >= 0 and h.find('unsafe impl') == h.index('impl') - 7 else 0):]
        tr, ty = parse_impl(h)
        out.append(dict(line=t['line'], trait=tr, type=ty, header=h, ctype=t['name']))
    return out


def grep_impls(crate, rel):
    """pure line-regex impl finder: lines that start (after indentation) with `impl` or `unsafe impl`."""
    code = strip_line_comments(crate, rel)
    out = []
    for i, l in enumerate(code):
        if re.match(r'\s*(unsafe\s+)?impl\b', l):
            h = ''
            k = i
            while True:
                h += ' ' + code[k]
                if '{' in code[k]:
                    break
                k += 1
            h = re.sub(r'\s+', ' ', h[:h.index('{')]).strip()
            tr, ty = parse_impl(h)
            out.append(dict(line=i + 1, trait=tr, type=ty, header=h))
    return out
