"""Small hand-written Rust source scanner (method 1).

Produces, per file:
  - text with comments blanked (same length, newlines kept)          -> .nocom
  - text with comments AND string/char literal contents blanked      -> .clean
  - items: fn / struct / enum / trait / impl / mod / macro_rules / macro invocations at item level,
    with byte ranges, line numbers, enclosing context, attributes, cfg(test) status.
"""
import re, os, sys, json

IDENT = r'[A-Za-z_][A-Za-z0-9_]*'
CHAR_RE = re.compile(r"'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F_]+\}|.)|[^\\'\n])'")


def blank(s):
    return re.sub(r'[^\n]', ' ', s)


def strip(src):
    """return (nocom, clean)"""
    n = len(src)
    nocom = list(src)
    clean = list(src)
    i = 0
    while i < n:
        c = src[i]
        if src.startswith('//', i):
            j = src.find('\n', i)
            if j < 0:
                j = n
            for k in range(i, j):
                nocom[k] = ' '; clean[k] = ' '
            i = j
            continue
        if src.startswith('/*', i):
            depth = 0; j = i
            while j < n:
                if src.startswith('/*', j):
                    depth += 1; j += 2
                elif src.startswith('*/', j):
                    depth -= 1; j += 2
                    if depth == 0:
                        break
                else:
                    j += 1
            for k in range(i, j):
                if src[k] != '\n':
                    nocom[k] = ' '; clean[k] = ' '
            i = j
            continue
        # raw strings r"..." r#"..."# br#"..."#
        m = re.compile(r'(b?r)(#*)"').match(src, i)
        if m and (i == 0 or not (src[i-1].isalnum() or src[i-1] == '_')):
            hashes = m.group(2)
            end = src.find('"' + hashes, m.end())
            if end < 0:
                end = n
            for k in range(m.end(), end):
                if src[k] != '\n':
                    clean[k] = ' '
            i = end + 1 + len(hashes)
            continue
        if c == '"' or (c == 'b' and src.startswith('b"', i) and (i == 0 or not (src[i-1].isalnum() or src[i-1] == '_'))):
            j = i + (2 if c == 'b' else 1)
            while j < n and src[j] != '"':
                if src[j] == '\\':
                    j += 2
                else:
                    j += 1
            for k in range(i + (2 if c == 'b' else 1), j):
                if src[k] != '\n':
                    clean[k] = ' '
            i = j + 1
            continue
        if c == "'" or (c == 'b' and src.startswith("b'", i) and (i == 0 or not (src[i-1].isalnum() or src[i-1] == '_'))):
            st = i + (1 if c == 'b' else 0)
            m = CHAR_RE.match(src, st)
            if m:
                for k in range(st + 1, m.end() - 1):
                    clean[k] = ' '
                i = m.end()
                continue
            i += 1  # lifetime
            continue
        i += 1
    return ''.join(nocom), ''.join(clean)


def match_brace(s, i, o='{', c='}'):
    """s[i] == o ; return index of matching close"""
    d = 0
    for j in range(i, len(s)):
        if s[j] == o:
            d += 1
        elif s[j] == c:
            d -= 1
            if d == 0:
                return j
    return len(s) - 1


def find_body_start(s, i):
    """from i, find first '{' or ';' at paren/bracket depth 0. returns index."""
    d = 0
    j = i
    while j < len(s):
        ch = s[j]
        if ch in '([':
            d += 1
        elif ch in ')]':
            d -= 1
        elif d == 0 and ch in '{;':
            return j
        j += 1
    return len(s)


def line_of(s, i):
    return s.count('\n', 0, i) + 1


def prev_token_end(s, i):
    j = i - 1
    while j >= 0 and s[j].isspace():
        j -= 1
    return j


def collect_attrs(clean, nocom, start):
    """attributes immediately preceding position start (outer attrs). returns list of attr texts, new start"""
    attrs = []
    j = prev_token_end(clean, start)
    while j >= 0 and clean[j] == ']':
        # find matching '['
        d = 0; k = j
        while k >= 0:
            if clean[k] == ']':
                d += 1
            elif clean[k] == '[':
                d -= 1
                if d == 0:
                    break
            k -= 1
        if k > 0 and clean[k-1] == '#':
            attrs.insert(0, re.sub(r'\s+', ' ', nocom[k-1:j+1]))
            start = k - 1
            j = prev_token_end(clean, start)
        else:
            break
    return attrs, start


def split_angle_prefix(h):
    """h starts with '<' : return index after matching '>' (handles ->)"""
    d = 0; j = 0
    while j < len(h):
        if h.startswith('->', j):
            j += 2; continue
        if h[j] == '<':
            d += 1
        elif h[j] == '>':
            d -= 1
            if d == 0:
                return j + 1
        j += 1
    return len(h)


def top_level_split(h, word):
    """find word at angle/paren depth 0, return index or -1"""
    d = 0; j = 0
    while j < len(h):
        if h.startswith('->', j):
            j += 2; continue
        ch = h[j]
        if ch in '<([':
            d += 1
        elif ch in '>)]':
            d -= 1
        elif d == 0:
            m = re.compile(r'\b' + word + r'\b').match(h, j)
            if m and (j == 0 or not (h[j-1].isalnum() or h[j-1] == '_')):
                if word == 'for' and re.match(r'for\s*<', h[j:]):
                    pass
                else:
                    return j
        j += 1
    return -1


def base_name(t):
    t = t.strip()
    t = re.sub(r"^(&\s*('\w+\s*)?(mut\s+)?)+", '', t).strip()
    t = re.sub(r'^(dyn|impl)\s+', '', t)
    t = re.sub(r'^(mut|const)\s+', '', t)
    if t.startswith('*'):
        t = re.sub(r'^\*\s*(const|mut)\s+', '', t)
    # cut generics
    d = 0; out = ''
    for ch in t:
        if ch == '<':
            break
        out += ch
    out = out.split('+')[0].strip()
    out = out.split('::')[-1].strip()
    return out


def parse_impl_header(h):
    h = re.sub(r'\s+', ' ', h).strip()
    assert h.startswith('impl'), h
    rest = h[4:].strip()
    if rest.startswith('<'):
        k = split_angle_prefix(rest)
        rest = rest[k:].strip()
    w = top_level_split(rest, 'where')
    if w >= 0:
        rest = rest[:w].strip()
    f = top_level_split(rest, 'for')
    neg = False
    if f >= 0:
        trait = rest[:f].strip()
        typ = rest[f+3:].strip()
        if trait.startswith('!'):
            neg = True; trait = trait[1:].strip()
        return dict(trait_full=trait, trait=base_name(trait), type_full=typ, type=base_name(typ), negative=neg)
    return dict(trait_full=None, trait=None, type_full=rest, type=base_name(rest), negative=False)


ITEM_RE = re.compile(r'\b(fn|struct|enum|trait|impl|mod|union|type|const|static|macro_rules)\b')


def scan(path):
    src = open(path, encoding='utf-8').read()
    nocom, clean = strip(src)
    items = []
    # macro_rules ranges and item-level macro invocations
    macro_ranges = []
    for m in re.finditer(r'\bmacro_rules!\s*(' + IDENT + r')\s*([{(\[])', clean):
        o = m.group(2); c = {'{': '}', '(': ')', '[': ']'}[o]
        e = match_brace(clean, m.end() - 1, o, c)
        macro_ranges.append((m.start(), e, 'macro_rules', m.group(1)))
    invoc_ranges = []
    for m in re.finditer(r'\b(' + IDENT + r')!\s*([{(\[])', clean):
        if m.group(1) == 'macro_rules':
            continue
        o = m.group(2); c = {'{': '}', '(': ')', '[': ']'}[o]
        e = match_brace(clean, m.end() - 1, o, c)
        invoc_ranges.append((m.start(), e, 'invocation', m.group(1)))

    def in_ranges(pos, ranges):
        return [r for r in ranges if r[0] <= pos <= r[1]]

    for m in ITEM_RE.finditer(clean):
        kw = m.group(1)
        pos = m.start()
        # skip if preceded by identifier char or ':' (paths) or '.'
        if pos > 0 and (clean[pos-1].isalnum() or clean[pos-1] in "_'*$"):
            continue
        if kw == 'const' and re.match(r'const\s+(unsafe\s+)?(extern\s*("[^"]*")?\s*)?fn\b', clean[pos:pos+60]):
            continue
        if kw == 'const' and re.match(r'const\s*\{', clean[pos:pos+20]):
            continue
        it = dict(kw=kw, pos=pos, line=line_of(clean, pos))
        if kw == 'impl':
            pj = prev_token_end(clean, pos)
            prevw = re.search(r'(' + IDENT + r')$', clean[max(0, pj-20):pj+1])
            ok = pj < 0 or clean[pj] in '};{]' or (prevw and prevw.group(1) in ('unsafe', 'default'))
            if not ok:
                continue
            bs = find_body_start(clean, pos)
            hdr = nocom[pos:bs]
            it.update(parse_impl_header(hdr))
            it['header'] = re.sub(r'\s+', ' ', hdr).strip()
            it['unsafe'] = bool(prevw and prevw.group(1) == 'unsafe' and clean[pj] != '}')
            it['body'] = (bs, match_brace(clean, bs) if clean[bs] == '{' else bs)
        elif kw == 'fn':
            mm = re.compile(r'fn\s+(' + IDENT + r')').match(clean, pos)
            if not mm:
                continue  # fn pointer type
            it['name'] = mm.group(1)
            # qualifiers before
            st = pos
            while True:
                pj = prev_token_end(clean, st)
                seg = clean[max(0, pj-40):pj+1]
                q = re.search(r'(\bpub\s*\([^()]*\)|\bpub|\bconst|\basync|\bunsafe|\bdefault|\bextern\s*"\s*"|\bextern)$', seg)
                if q:
                    st = pj + 1 - len(q.group(1))
                    continue
                break
            bs = find_body_start(clean, mm.end())
            it['sig'] = re.sub(r'\s+', ' ', nocom[st:bs]).strip()
            it['sig_start'] = st
            it['has_body'] = bs < len(clean) and clean[bs] == '{'
            it['body'] = (bs, match_brace(clean, bs) if it['has_body'] else bs)
            it['pub'] = it['sig'].startswith('pub')
            it['pub_exact'] = bool(re.match(r'pub\s', it['sig']))
            it['unsafe'] = bool(re.match(r'(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?unsafe\b', it['sig']))
        else:
            mm = re.compile(kw + r'!?\s+(' + IDENT + r')').match(clean, pos)
            if not mm:
                continue
            it['name'] = mm.group(1)
            if kw == 'type' and re.match(r'\s*=', clean[mm.end():]) is None and False:
                pass
            bs = find_body_start(clean, mm.end())
            if kw in ('struct', 'enum', 'trait', 'mod', 'union'):
                if bs < len(clean) and clean[bs] == '{':
                    it['body'] = (bs, match_brace(clean, bs))
                else:
                    it['body'] = (bs, bs)
            st = pos
            pj = prev_token_end(clean, st)
            seg = clean[max(0, pj-40):pj+1]
            q = re.search(r'(\bpub\s*\([^()]*\)|\bpub)$', seg)
            if q:
                st = pj + 1 - len(q.group(1))
            it['decl'] = re.sub(r'\s+', ' ', nocom[st:bs]).strip()
            it['sig_start'] = st
            it['pub'] = it['decl'].startswith('pub')
            it['unsafe'] = False
        st = it.get('sig_start', pos)
        attrs, _ = collect_attrs(clean, nocom, st)
        it['attrs'] = attrs
        it['in_macro_rules'] = bool(in_ranges(pos, macro_ranges))
        it['in_invocation'] = [r[3] for r in in_ranges(pos, invoc_ranges)]
        items.append(it)
    # contexts: enclosing items with bodies
    blocks = [x for x in items if 'body' in x and x['body'][1] > x['body'][0]]
    for it in items:
        enc = [b for b in blocks if b is not it and b['body'][0] < it['pos'] < b['body'][1]]
        enc.sort(key=lambda b: b['body'][0])
        it['ctx'] = [(b['kw'], b.get('name') or b.get('header')) for b in enc]
        it['parent'] = enc[-1] if enc else None
        # cfg(test) status: itself or any enclosing has #[cfg(test)] or #[test]
        def is_test(x):
            return any(re.match(r'#\[\s*cfg\s*\(\s*test\s*\)\s*\]', a) for a in x['attrs'])
        it['cfg_test'] = is_test(it) or any(is_test(b) for b in enc)
        it['is_test_fn'] = any(re.match(r'#\[\s*test\s*\]', a) for a in it['attrs'])
        it['cfg'] = [a for a in it['attrs'] if 'cfg' in a] + [a for b in enc for a in b['attrs'] if 'cfg' in a]
    return dict(src=src, nocom=nocom, clean=clean, items=items, macro_ranges=macro_ranges, invoc_ranges=invoc_ranges)


def rs_files(root):
    out = []
    for dp, dn, fn in os.walk(root):
        for f in fn:
            if f.endswith('.rs'):
                out.append(os.path.relpath(os.path.join(dp, f), root))
    return sorted(out)


REG = '/usr/share/cargo/registry'

if __name__ == '__main__':
    p = sys.argv[1]
    r = scan(p)
    for it in r['items']:
        if it['kw'] == 'impl':
            print(it['line'], 'impl', it['trait'], 'for' if it['trait'] else '', it['type'], '| unsafe' if it['unsafe'] else '', it['cfg'] if it['cfg'] else '', 'MACRO' if it['in_macro_rules'] else '', it['in_invocation'] or '', 'TEST' if it['cfg_test'] else '')
        elif it['kw'] == 'fn':
            print(it['line'], 'fn', it['sig'], '|', [c[1] for c in it['ctx']][-1:] , 'MACRO' if it['in_macro_rules'] else '', it['in_invocation'] or '', 'TEST' if it['cfg_test'] else '', it['cfg'] if it['cfg'] else '')
        else:
            print(it['line'], it['kw'], (it.get('decl') or '')[:120], 'MACRO' if it['in_macro_rules'] else '', it['in_invocation'] or '', 'TEST' if it['cfg_test'] else '', it['cfg'] if it['cfg'] else '')
