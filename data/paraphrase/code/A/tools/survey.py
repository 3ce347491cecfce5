import rs, sys, os, re
root='/usr/share/cargo/registry/'
for crate in sys.argv[1:]:
    base=root+crate+'/src/'
    for dp,dn,fn in sorted(os.walk(base)):
        for f in sorted(fn):
            p=os.path.join(dp,f); rel=os.path.relpath(p,base)
            src,code=rs.load(p)
            mr=rs.macro_regions(code); tr=rs.test_regions(code)
            print('=====',crate,rel,'macro regions',[(rs.lineno(code,a),rs.lineno(code,b)) for a,b in mr],'test regions',[(rs.lineno(code,a),rs.lineno(code,b)) for a,b in tr])
            for ln,h,u,idx in rs.impls(code):
                flag=('M' if rs.inside(idx,mr) else '')+('T' if rs.inside(idx,tr) else '')
                print('  impl',ln,flag,h)
