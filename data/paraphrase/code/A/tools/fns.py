import rs, sys
for p in sys.argv[1:]:
    src,code=rs.load(p); mr=rs.macro_regions(code); tr=rs.test_regions(code)
    for ln,name,sig,idx in rs.fns(code):
        flag=('M' if rs.inside(idx,mr) else '')+('T' if rs.inside(idx,tr) else '')
        print(p.split('registry/')[1], ln, flag, sig)
