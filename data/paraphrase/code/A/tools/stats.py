import rs, sys, os, re, collections
root='/usr/share/cargo/registry/'
def trait_of(h):
    # header like "impl<...> Trait<..> for Type where"
    s=re.sub(r'^(pub\S*\s+)?(unsafe\s+)?impl\s*','',h)
    # strip leading generics
    if s.startswith('<'):
        d=0
        for i,ch in enumerate(s):
            if ch=='<': d+=1
            elif ch=='>': d-=1
            if d==0: s=s[i+1:].strip(); break
    # find ' for ' at depth 0
    d=0; i=0
    while i<len(s):
        ch=s[i]
        if ch in '<([': d+=1
        elif ch in '>)]': d-=1
        if d==0 and s.startswith(' for ',i):
            tr=s[:i].strip(); ty=s[i+5:].split(' where')[0].strip(); return tr,ty
        i+=1
    return None, s.split(' where')[0].strip()
crate=sys.argv[1]
base=root+crate+'/src/'
tot=collections.Counter()
for dp,dn,fn in sorted(os.walk(base)):
    for f in sorted(fn):
        p=os.path.join(dp,f); rel=os.path.relpath(p,base)
        src,code=rs.load(p); mr=rs.macro_regions(code); tr=rs.test_regions(code)
        ok=lambda idx: not rs.inside(idx,mr)
        imps=[x for x in rs.impls(code) if ok(x[3])]
        fns=[x for x in rs.fns(code) if ok(x[3])]
        ub=[m for m in re.finditer(r'\bunsafe\s*\{',code) if ok(m.start())]
        ui=[x for x in imps if x[2]]
        ufn=[x for x in fns if re.search(r'\bunsafe\s+fn\b',x[2])]
        traitimps=[trait_of(x[1]) for x in imps]
        timp=[t for t in traitimps if t[0]]
        nun=len(re.findall(r'\.unwrap\(\)',code))
        print(f"{rel:28s} impls={len(imps):3d} traitimpls={len(timp):3d} inherent={len(imps)-len(timp):3d} fns={len(fns):3d} pubfns={sum(1 for x in fns if x[2].startswith('pub fn') or x[2].startswith('pub ')):3d} unsafe_blocks={len(ub):3d} unsafe_impls={len(ui):2d} unsafe_fns={len(ufn):2d} unwrap={nun}")
        for t in timp: tot[re.sub(r'<.*','',t[0]).split('::')[-1]]+=1
print(tot.most_common())
