"""Small self-written Rust scanner: strips comments/strings, marks regions
(cfg(test) modules, macro_rules! bodies), extracts impl headers, fns, unsafe blocks."""
import re, sys, os

def strip(src):
    """Return code with comments and string/char literal contents replaced by spaces (newlines kept)."""
    out = []; i = 0; n = len(src)
    while i < n:
        c = src[i]
        if src.startswith('//', i):
            j = src.find('\n', i)
            if j < 0: j = n
            out.append(' ' * (j - i)); i = j; continue
        if src.startswith('/*', i):
            depth = 0; j = i
            while j < n:
                if src.startswith('/*', j): depth += 1; j += 2; continue
                if src.startswith('*/', j):
                    depth -= 1; j += 2
                    if depth == 0: break
                    continue
                j += 1
            out.append(re.sub(r'[^\n]', ' ', src[i:j])); i = j; continue
        m = re.match(r'b?r(#*)"', src[i:i+10])
        if m and (i == 0 or not (src[i-1].isalnum() or src[i-1] == '_')):
            hashes = m.group(1); end = '"' + hashes
            j = src.find(end, i + m.end())
            j = j + len(end)
            out.append(src[i:i+m.end()] + re.sub(r'[^\n]', ' ', src[i+m.end():j-len(end)]) + end); i = j; continue
        if c == '"' or (c == 'b' and src.startswith('b"', i) and not (i>0 and (src[i-1].isalnum() or src[i-1]=='_'))):
            start = i + (2 if c == 'b' else 1)
            j = start
            while j < n:
                if src[j] == '\\': j += 2; continue
                if src[j] == '"': break
                j += 1
            out.append(src[i:start] + re.sub(r'[^\n]', ' ', src[start:j]) + '"'); i = j + 1; continue
        if c == "'":
            # char literal vs lifetime
            m = re.match(r"'(\\.[^']*|[^\\'])'", src[i:i+12])
            if m:
                out.append("'" + ' ' * (m.end() - 2) + "'"); i += m.end(); continue
        out.append(c); i += 1
    return ''.join(out)

def match_brace(code, i):
    """code[i] == '{' ; return index of matching '}'."""
    d = 0
    for j in range(i, len(code)):
        if code[j] in '{([': d += 1 if code[j] == '{' else 0
        if code[j] == '{': pass
        if code[j] == '}':
            d -= 1
            if d == 0: return j
    return len(code) - 1

def match_brace(code, i):
    d = 0
    for j in range(i, len(code)):
        if code[j] == '{': d += 1
        elif code[j] == '}':
            d -= 1
            if d == 0: return j
    return len(code) - 1

def regions(code):
    """Return list of (start,end,kind) for cfg(test) mod bodies and macro_rules bodies."""
    regs = []
    for m in re.finditer(r'#\[cfg\((?:test|all\(test[^\]]*)\)\]\s*(?:#\[[^\]]*\]\s*)*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{', code):
        b = m.end() - 1; regs.append((m.start(), match_brace(code, b), 'test'))
    for m in re.finditer(r'macro_rules!\s*\w+\s*([{(\[])', code):
        b = m.end() - 1
        close = {'{': '}', '(': ')', '[': ']'}[m.group(1)]
        d = 0
        for j in range(b, len(code)):
            if code[j] == m.group(1): d += 1
            elif code[j] == close:
                d -= 1
                if d == 0: break
        regs.append((m.start(), j, 'macro'))
    return regs

def in_regs(pos, regs, kinds=('test', 'macro')):
    return any(s <= pos <= e and k in kinds for s, e, k in regs)

def lineno(code, pos):
    return code.count('\n', 0, pos) + 1

def load(path):
    src = open(path, encoding='utf-8').read()
    code = strip(src)
    return src, code, regions(code)

def impls(code):
    """yield (pos, header_text, unsafe) for impl headers, header = text from 'impl' to '{' or ';'"""
    for m in re.finditer(r'(?<![\w])(unsafe\s+)?impl\b', code):
        # skip `impl Trait` in type position: header must be at item start (prev non-space char is ; } { ] or start or ')' of attr)
        k = m.start() - 1
        while k >= 0 and code[k] in ' \t\n': k -= 1
        prev = code[k] if k >= 0 else ';'
        # allow preceded by 'default' keyword
        if prev not in ';{}]' :
            if not code[:m.start()].rstrip().endswith('default'):
                continue
        j = m.end(); d = 0
        while j < len(code):
            ch = code[j]
            if ch == '<': d += 1
            elif ch == '>' and code[j-1] != '-': d -= 1
            elif ch in '{;' and d <= 0: break
            j += 1
        hdr = ' '.join(code[m.start():j].split())
        yield m.start(), hdr, bool(m.group(1))

def split_impl(hdr):
    """return (trait or None, self_type) from an impl header"""
    h = re.sub(r'^(unsafe\s+)?impl\s*', '', hdr)
    # strip leading generics
    if h.startswith('<'):
        d = 0
        for i, ch in enumerate(h):
            if ch == '<': d += 1
            elif ch == '>' and h[i-1] != '-':
                d -= 1
                if d == 0: h = h[i+1:].strip(); break
    # strip where clause
    h = re.split(r'\bwhere\b', h)[0].strip()
    # find ' for ' at depth 0
    d = 0
    for i in range(len(h)):
        ch = h[i]
        if ch in '<([': d += 1
        elif ch in '>)]' and not (ch == '>' and h[i-1] == '-'): d -= 1
        elif d == 0 and h.startswith(' for ', i) :
            return h[:i].strip(), h[i+5:].strip()
    return None, h

def base(name):
    name = name.strip().lstrip('!')
    name = re.sub(r'^(&\s*(\'\w+\s*)?(mut\s+)?)', '', name)
    name = name.split('<')[0].strip()
    return name.split('::')[-1]
