"""Tiny Rust source analyzer (writer A's own tool).
strip(): replace comments/strings/chars with spaces preserving newlines.
regions(): macro_rules! bodies and #[cfg(test)] mod bodies as (start,end) char offsets.
"""
import re, sys, os

def strip(src):
    out = []
    i, n = 0, len(src)
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
            out.append(''.join(ch if ch == '\n' else ' ' for ch in src[i:j])); i = j; continue
        m = re.match(r'b?r(#*)"', src[i:i+10])
        if m and (i == 0 or not (src[i-1].isalnum() or src[i-1] == '_')):
            hashes = m.group(1)
            end = src.find('"' + hashes, i + m.end())
            j = end + 1 + len(hashes)
            out.append(src[i:i+m.end()] + ''.join(ch if ch == '\n' else ' ' for ch in src[i+m.end():j-1-len(hashes)]) + src[j-1-len(hashes):j]); i = j; continue
        if c == '"' or (c == 'b' and src.startswith('b"', i) and not (i > 0 and (src[i-1].isalnum() or src[i-1]=='_'))):
            start = i
            if c == 'b': i += 1
            j = i + 1
            while j < n and src[j] != '"':
                if src[j] == '\\': j += 2; continue
                j += 1
            j += 1
            out.append(src[start:i+1] + ''.join(ch if ch == '\n' else ' ' for ch in src[i+1:j-1]) + '"'); i = j; continue
        if c == "'":
            # char literal vs lifetime
            m = re.match(r"'(\\(x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'])'", src[i:i+14])
            if m:
                out.append("'" + ' ' * (m.end() - 2) + "'"); i += m.end(); continue
        out.append(c); i += 1
    return ''.join(out)

def match_brace(code, open_idx):
    depth = 0
    for j in range(open_idx, len(code)):
        if code[j] in '{([':
            depth += 1
        elif code[j] in '})]':
            depth -= 1
            if depth == 0: return j
    return len(code)

def macro_regions(code):
    regs = []
    for m in re.finditer(r'\bmacro_rules!\s*\w+\s*([{(\[])', code):
        o = m.end() - 1
        regs.append((m.start(), match_brace(code, o)))
    return regs

def test_regions(code):
    regs = []
    for m in re.finditer(r'#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub\s+)?mod\s+\w+\s*\{', code):
        o = m.end() - 1
        regs.append((m.start(), match_brace(code, o)))
    return regs

def lineno(code, idx):
    return code.count('\n', 0, idx) + 1

def inside(idx, regs):
    return any(a <= idx <= b for a, b in regs)

def impls(code):
    """Yield (line, header, unsafe) for impl blocks."""
    res = []
    for m in re.finditer(r'(?:(?<=\n)|^)[ \t]*(?:(?:pub(?:\([^)]*\))?\s+)?)?(unsafe\s+)?impl\b', code):
        # header until '{' or ';' at angle/paren depth0
        j = m.end(); depth = 0
        while j < len(code):
            ch = code[j]
            if ch in '(<[': depth += 1
            elif ch in ')>]':
                if ch == '>' and code[j-1] == '-': pass
                else: depth -= 1
            elif ch in '{;' and depth <= 0: break
            j += 1
        hdr = ' '.join(code[m.start():j].split())
        res.append((lineno(code, m.start()), hdr, bool(m.group(1)), m.start()))
    return res

def fns(code):
    res = []
    for m in re.finditer(r'(?:(?<=\n)|^)[ \t]*((?:pub(?:\([^)]*\))?\s+)?(?:default\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+"[^"]*"\s+)?fn\s+(\w+))', code):
        j = m.end(); depth = 0
        while j < len(code):
            ch = code[j]
            if ch in '(<[': depth += 1
            elif ch in ')>]':
                if ch == '>' and code[j-1] == '-': pass
                else: depth -= 1
            elif ch in '{;' and depth <= 0: break
            j += 1
        sig = ' '.join(code[m.start(1):j].split())
        res.append((lineno(code, m.start(1)), m.group(2), sig, m.start(1)))
    return res

def load(path):
    src = open(path, encoding='utf-8').read()
    return src, strip(src)
