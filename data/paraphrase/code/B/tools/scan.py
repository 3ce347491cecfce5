import sys, re
sys.path.insert(0, '.')
from rs import *
def fns(code, regs):
    out=[]
    for m in re.finditer(r'(?m)^([ \t]*)((?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+"[^"]*"\s+)?fn\s+(\w+))', code):
        out.append((lineno(code,m.start()), m.group(3), m.group(2).split('fn')[0].strip(), in_regs(m.start(),regs,('test',)), in_regs(m.start(),regs,('macro',)), len(m.group(1))))
    return out
def unsafe_blocks(code, regs):
    out=[]
    for m in re.finditer(r'\bunsafe\s*\{', code):
        out.append((lineno(code,m.start()), in_regs(m.start(),regs,('test',)), in_regs(m.start(),regs,('macro',))))
    return out
def traits(code, regs):
    return [(lineno(code,m.start()), m.group(2), in_regs(m.start(),regs)) for m in re.finditer(r'(?m)^\s*(pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?trait\s+(\w+)', code)]
if __name__=='__main__':
    for p in sys.argv[1:]:
        src, code, regs = load(p)
        print('=====', p, 'regions', [(lineno(code,s),lineno(code,e),k) for s,e,k in regs])
        for pos,h,u in impls(code):
            t,s = split_impl(h)
            print('IMPL %5d %s%s | trait=%s self=%s %s' % (lineno(code,pos), 'U ' if u else '', h[:110], t and base(t), base(s), 'TEST' if in_regs(pos,regs,('test',)) else ('MACRO' if in_regs(pos,regs,('macro',)) else '')))
        for f in fns(code, regs): print('FN', f)
        for t in traits(code, regs): print('TRAIT', t)
        print('UNSAFE_BLOCKS', unsafe_blocks(code, regs))
