import json
V={'smallvec':'1.9.0','slab':'0.4.4','either':'1.6.1','semver':'1.0.14','arrayvec':'0.7.2','itoa':'1.0.1','scopeguard':'1.1.0','crossbeam-channel':'0.5.6'}
Q=[]
def q(level,crate,source,kind,scope,query,checker,expected,targets,rules,method,check):
    Q.append(dict(level=level,query=query,checker=checker,expected=expected,domain='crate:'+crate,crate_version=V[crate],
                  source=source,kind=kind,scope=scope,targets=targets,rules=rules,method=method,check=check))
CT="ctags -x --languages=Rust --kinds-Rust=*"
# ---------------- L1 ----------------
q(1,'slab','lib.rs','signature','file',
  "What's the full signature of `Slab::get2_mut` in slab's lib.rs? Give it from `pub` up to (not including) the opening brace, on one line.",
  'exact',"pub fn get2_mut(&mut self, key1: usize, key2: usize) -> Option<(&mut T, &mut T)>",['get2_mut'],'',
  'own Python item extractor (tools/rs.py fns) on lib.rs line 711','read source line 711 with sed; identical')
q(1,'scopeguard','lib.rs','signature','file',
  "In scopeguard, give me the complete signature of the free function guard — visibility, generics, parameters, return type and the where clause, whitespace collapsed, without the body.",
  'exact',"pub fn guard<T, F>(v: T, dropfn: F) -> ScopeGuard<T, F, Always> where F: FnOnce(T)",['guard'],'include where clause',
  'tools/rs.py fns on lib.rs (line 367)','sed -n 367,369p and collapsed whitespace by hand; identical')
q(1,'semver','lib.rs','fields','file',
  "List the fields of the Comparator struct defined in semver's lib.rs.",
  'set',["op","major","minor","patch","pre"],['Comparator'],'',
  f'{CT} lib.rs | grep field (lines 197-203)','read struct body at lib.rs:196-204; same 5 fields')
q(1,'crossbeam-channel','err.rs','variants','file',
  "what variants does RecvTimeoutError have? (crossbeam-channel, err.rs)",
  'set',["Timeout","Disconnected"],['RecvTimeoutError'],'',
  f'{CT} err.rs enumerators near the enum','read enum body in err.rs; agreed')
q(1,'itoa','lib.rs','return_type','file',
  "In itoa's lib.rs, what does `Buffer::format` return? Just the return type.",
  'exact',"&str",['Buffer::format'],'',
  'tools/rs.py fns: line 86 `pub fn format<I: Integer>(&mut self, i: I) -> &str`','sed -n 86p lib.rs; agreed')
q(1,'arrayvec','array_string.rs','signature','file',
  "Could you give me the exact signature of ArrayString's try_push_str method (array_string.rs)? From the visibility keyword to just before the `{`.",
  'exact',"pub fn try_push_str<'a>(&mut self, s: &'a str) -> Result<(), CapacityError<&'a str>>",['try_push_str'],'',
  'tools/rs.py fns on array_string.rs line 279','sed -n 279p; identical')
q(1,'either','lib.rs','yes_no','file',
  "Does either's lib.rs define a method named `flip` on Either? yes or no",
  'exact',"yes",['flip'],'',
  "grep -n 'fn flip' lib.rs -> line 231 inside impl<L, R> Either<L, R>",f'{CT} lib.rs | grep flip; agreed')
q(1,'slab','lib.rs','yes_no','file',
  "Is there a `pop` method defined anywhere in slab's lib.rs? Answer yes/no.",
  'exact',"no",['pop'],'',
  "grep -n 'fn pop' lib.rs -> no match",f'{CT} lib.rs has no tag named pop; agreed')
q(1,'semver','error.rs','variants','file',
  "Enumerate the variants of the ErrorKind enum in semver's src/error.rs (names only).",
  'set',["UnexpectedEnd","UnexpectedChar","UnexpectedCharAfter","ExpectedCommaFound","LeadingZero","Overflow","EmptySegment","IllegalCharacter","WildcardNotTheOnlyComparator","UnexpectedAfterWildcard","ExcessiveComparators"],['ErrorKind'],'',
  f'{CT} error.rs | grep enumerator (lines 5-15)','read enum body error.rs:4-16; 11 variants, same names')
q(1,'scopeguard','lib.rs','fields','file',
  "Which fields does the `ScopeGuard` struct in the scopeguard crate have?",
  'set',["value","dropfn","strategy"],['ScopeGuard'],'',
  f'{CT} lib.rs | grep field','read struct at lib.rs:298-306; agreed')
q(1,'crossbeam-channel','channel.rs','return_type','file',
  "Return type of crossbeam-channel's `bounded` function in channel.rs?",
  'exact',"(Sender<T>, Receiver<T>)",['bounded'],'',
  'tools/rs.py fns: channel.rs:107 pub fn bounded<T>(cap: usize) -> (Sender<T>, Receiver<T>)','grep -n "pub fn bounded" channel.rs; agreed')
q(1,'smallvec','lib.rs','signature','file',
  "smallvec lib.rs: what is the signature of SmallVec::insert_many? (text from `pub` up to the opening brace, single spaces)",
  'exact',"pub fn insert_many<I: IntoIterator<Item = A::Item>>(&mut self, index: usize, iterable: I)",['insert_many'],'',
  'tools/rs.py fns, lib.rs:1093','sed -n 1093p lib.rs; identical')
# ---------------- L2 ----------------
q(2,'semver','display.rs','list','file',
  "In semver's display.rs, for which types is the `Display` trait implemented?",
  'set',["Version","VersionReq","Comparator","Prerelease","BuildMetadata"],['Display'],'',
  'tools/rs.py impls on display.rs, filtered trait == Display',"grep -n 'impl.*Display for' display.rs; same 5")
q(2,'semver','eval.rs','list','file',
  "Name every function defined in src/eval.rs of semver.",
  'set',["matches_req","matches_comparator","matches_impl","matches_exact","matches_greater","matches_less","matches_tilde","matches_caret","pre_is_compatible"],[],'',
  f'{CT} eval.rs | grep function','grep -n "fn " eval.rs; same 9 names')
q(2,'scopeguard','lib.rs','count','file',
  "How many #[test] functions are there in scopeguard's lib.rs? Number only.",
  'numeric',8,['#[test]'],'',
  'grep -c "#\\[test\\]" lib.rs','tools/rs.py fns inside the #[cfg(test)] mod: 8 fns named test_*; agreed')
q(2,'smallvec','lib.rs','count','file',
  "Count the `unsafe impl` blocks written in smallvec's lib.rs. Include cfg-gated ones, but leave out the one inside the impl_array! macro_rules body.",
  'numeric',7,['unsafe impl'],'excluding macro_rules body; cfg-gated included',
  "grep -n 'unsafe impl' lib.rs -> 8 lines, minus line 2096 inside macro_rules! impl_array",'tools/rs.py impls with macro-region filter: 7; agreed')
q(2,'slab','lib.rs','list','file',
  "Which methods in slab/src/lib.rs are declared `pub unsafe fn`?",
  'set',["get_unchecked","get_unchecked_mut","get2_unchecked_mut"],['pub unsafe fn'],'',
  "grep -n 'pub unsafe fn' lib.rs",'tools/rs.py fns filtered on unsafe; same 3')
q(2,'crossbeam-channel','err.rs','list','file',
  "Looking only at crossbeam-channel's err.rs: which types get an implementation of std's `error::Error` trait?",
  'set',["SendError","TrySendError","SendTimeoutError","RecvError","TryRecvError","RecvTimeoutError","TrySelectError","SelectTimeoutError"],['error::Error'],'',
  "grep -n 'impl.*error::Error for' err.rs",f'{CT} err.rs implementation tags + reading headers; 8 types (TryReadyError and ReadyTimeoutError have none)')
q(2,'either','lib.rs','count','file',
  "how many unit tests (functions marked #[test]) live in either's lib.rs?",
  'numeric',6,['#[test]'],'',
  'grep -c "#\\[test\\]" lib.rs','grep -A2 to read each: basic, macros, deref, iter, read_write, error; 6')
q(2,'arrayvec','array_string.rs','count','file',
  "Count all impl blocks (inherent and trait impls together) in arrayvec's array_string.rs.",
  'numeric',25,['impl'],'inherent and trait impls',
  "grep -cE '^\\s*(unsafe )?impl\\b' array_string.rs",'ctags --kinds-Rust=c array_string.rs | wc -l = 25; tools/rs.py impls = 25')
q(2,'crossbeam-channel','waker.rs','list','file',
  "Give me every line in crossbeam-channel's waker.rs that calls `.unwrap()` (the plain method, not unwrap_or_else etc.), formatted as line:text with the text trimmed.",
  'set',["198:let mut inner = self.inner.lock().unwrap();","209:let mut inner = self.inner.lock().unwrap();","222:let mut inner = self.inner.lock().unwrap();","237:let mut inner = self.inner.lock().unwrap();","248:let mut inner = self.inner.lock().unwrap();","259:let mut inner = self.inner.lock().unwrap();"],['unwrap'],'plain .unwrap() only; line:text',
  "grep -n '\\.unwrap()' waker.rs, trimmed with python",'grep -n unwrap waker.rs by eye: 6 lines plus line 285 unwrap_or_else (excluded)')
q(2,'scopeguard','lib.rs','implementors','file',
  "Which types implement the Strategy trait in scopeguard/src/lib.rs?",
  'set',["Always","OnUnwind","OnSuccess"],['Strategy'],'',
  'tools/rs.py impls on lib.rs filtered trait == Strategy',"grep -n 'impl Strategy for' lib.rs; same 3")
# ---------------- L3 (crossbeam flavors) ----------------
q(3,'crossbeam-channel','flavors','list','module',
  "In crossbeam-channel's flavors module directory, which files declare a struct called `Channel`? File names please.",
  'set',["array.rs","at.rs","list.rs","never.rs","tick.rs","zero.rs"],['Channel'],'',
  "grep -n 'struct Channel' flavors/*.rs",f'{CT} flavors/*.rs | grep "struct" | grep Channel; same 6 files')
q(3,'crossbeam-channel','flavors','count','module',
  "Across all files under src/flavors, how many `impl ... SelectHandle for ...` blocks are there in total?",
  'numeric',9,['SelectHandle'],'',
  "grep -n 'impl.*SelectHandle for' flavors/*.rs | wc -l",'tools/rs.py impls per file: array 2, at 1, list 2, never 1, tick 1, zero 2 = 9')
q(3,'crossbeam-channel','flavors','list','module',
  "Which flavor implementations (files in flavors/) have a method named exactly `disconnect`?",
  'set',["array.rs","zero.rs"],['disconnect'],'exact name',
  "grep -n 'fn disconnect\\b' flavors/*.rs",f'{CT} flavors/*.rs | awk \'$1=="disconnect"\'; array.rs and zero.rs (list.rs only has disconnect_senders/disconnect_receivers)')
q(3,'crossbeam-channel','flavors','list','module',
  "Which files in the flavors directory contain a Drop implementation?",
  'set',["array.rs","list.rs"],['Drop'],'',
  "grep -n 'impl.*Drop for' flavors/*.rs",'tools/rs.py impls filtered trait Drop; array.rs:521 and list.rs:637')
q(3,'crossbeam-channel','flavors','list','module',
  "List the token type aliases (`type ...Token = ...`) declared across crossbeam-channel/src/flavors.",
  'set',["AtToken","NeverToken","TickToken"],['Token'],'',
  "grep -n 'type .*Token' flavors/*.rs",f'{CT} flavors/*.rs | grep typedef; same 3')
q(3,'crossbeam-channel','flavors','count','module',
  "How many `unsafe fn` definitions are there in total across the flavors module (all its .rs files)?",
  'numeric',10,['unsafe fn'],'',
  "grep -n 'unsafe fn' flavors/*.rs | wc -l",'tools/rs.py fns with unsafe: array 2, at 1, list 3, never 1, tick 1, zero 2 = 10')
q(3,'crossbeam-channel','flavors','count','module',
  "Total number of `.unwrap()` calls in the flavors/ directory of crossbeam-channel? Count each call, even when two are on the same line.",
  'numeric',36,['unwrap'],'each occurrence',
  "grep -o '\\.unwrap()' flavors/*.rs | wc -l (array 2, list 2, zero 32)",'tools/rs.py on comment-stripped code: same 36; no unwrap in comments')
q(3,'crossbeam-channel','flavors','argmax','module',
  "Which file in crossbeam-channel's flavors directory defines the most functions/methods?",
  'exact',"list.rs",['fn'],'',
  'ctags --kinds-Rust=fP per file: list 41, zero 38, array 35, at 17, never 16, tick 16','grep -cE fn-definition regex per file; same counts')
# ---------------- L4 ----------------
q(4,'semver','.','traits_of','crate',
  "Across the semver crate, which traits have an explicit `impl ... for Prerelease` block? Don't count #[derive] attributes.",
  'set',["Deref","PartialOrd","Ord","Display","Debug","FromStr"],['Prerelease'],'explicit impl blocks only, no derives',
  'tools/rs.py impls over all files, self type == Prerelease',"grep -nE 'impl.* for .*Prerelease' src/*.rs; same 6 (display.rs, impls.rs, parse.rs)")
q(4,'semver','.','implementors','crate',
  "Which types implement FromStr in semver?",
  'set',["Version","VersionReq","Comparator","Prerelease","BuildMetadata"],['FromStr'],'',
  'tools/rs.py impls over crate filtered trait FromStr',"grep -n 'impl FromStr for' src/*.rs; all 5 in parse.rs")
q(4,'crossbeam-channel','.','traits_of','crate',
  "For crossbeam-channel's public Sender<T> (the one defined in channel.rs, not counter::Sender), list every trait it has an explicit impl block for anywhere in the crate.",
  'set',["Send","Sync","UnwindSafe","RefUnwindSafe","Drop","Clone","Debug","SelectHandle"],['Sender'],'explicit impl blocks; public Sender<T> only',
  'tools/rs.py impls over crate, self type Sender<T> in channel.rs (flavors Sender<\'_, T> and counter Sender<C> are other types)',"grep -rn 'for Sender<T>' src; same 8")
q(4,'semver','.','implementors','crate',
  "Give me all the types in the semver crate that implement `Display` (look through every source file).",
  'set',["Version","VersionReq","Comparator","Prerelease","BuildMetadata","Error","Position","QuotedChar"],['Display'],'',
  'tools/rs.py impls over crate filtered trait Display',"grep -n 'impl Display for' src/*.rs: display.rs 5 + error.rs 3")
q(4,'arrayvec','.','implementors','crate',
  "In arrayvec 0.7.2, which types have a Drop impl? Names only, no generics.",
  'set',["ArrayVec","BackshiftOnDrop","IntoIter","Drain","ScopeExitGuard"],['Drop'],'',
  'tools/rs.py impls over crate filtered trait Drop',"grep -nE 'impl.*Drop for' src/*.rs; 5 (all in arrayvec.rs, BackshiftOnDrop is local to retain)")
q(4,'slab','.','implementors','crate',
  "Which types in slab have a hand-written fmt::Debug impl (an explicit impl block, not #[derive(Debug)])?",
  'set',["Slab","IntoIter","Iter","IterMut","Drain"],['Debug'],'explicit impl blocks only',
  'tools/rs.py impls over lib.rs and serde.rs filtered trait Debug',"grep -n 'Debug for' src/*.rs; same 5 (VacantEntry only derives Debug)")
q(4,'smallvec','.','traits_of','crate',
  "smallvec: which traits does IntoIter<A> implement? List the trait names without paths.",
  'set',["Debug","Clone","Drop","Iterator","DoubleEndedIterator","ExactSizeIterator","FusedIterator"],['IntoIter'],'',
  'tools/rs.py impls over crate, self type IntoIter<A>',"grep -nE 'impl.* for IntoIter' src/*.rs; same 7")
q(4,'crossbeam-channel','.','implementors','crate',
  "Which source files of crossbeam-channel contain an implementation of Drop (for any type)? Give paths relative to src/.",
  'set',["channel.rs","select.rs","waker.rs","flavors/array.rs","flavors/list.rs"],['Drop'],'',
  'tools/rs.py impls over crate filtered trait Drop: Sender, Receiver (channel.rs), SelectedOperation (select.rs), Waker, SyncWaker (waker.rs), Channel (array.rs, list.rs)',"grep -rnE 'impl.*Drop for' src; same 5 files")
# ---------------- L5 ----------------
q(5,'semver','.','argmax','crate',
  "Which source file of semver has the largest number of impl blocks?",
  'exact',"impls.rs",['impl'],'',
  "grep -cE '^\\s*(unsafe )?impl\\b' src/*.rs: impls.rs 10, serde.rs 9, display.rs 8",'ctags --kinds-Rust=c per file; same counts')
q(5,'semver','.','argmax','crate',
  "What's the most frequently implemented trait in the semver crate, counting impl blocks (derives don't count)?",
  'exact',"Display",['impl'],'explicit impl blocks only',
  'tools/stats.py trait counter: Display 8, FromStr 5, Debug 4',"grep impl...for lines | sed trait name | sort | uniq -c; Display 8")
q(5,'crossbeam-channel','.','count','crate',
  "How many `unsafe impl` blocks are there in the whole crossbeam-channel crate?",
  'numeric',6,['unsafe impl'],'',
  "grep -rnE '^\\s*unsafe impl' src | wc -l (channel.rs 4, select.rs 2)",'tools/rs.py impls with unsafe flag over crate: 6')
q(5,'crossbeam-channel','.','argmax','crate',
  "Ignoring comments and doc-comment examples, which file in crossbeam-channel has the most `.unwrap()` calls in actual code? Path relative to src/.",
  'exact',"flavors/zero.rs",['unwrap'],'excluding comments and doc comments',
  "per file: grep -v '^\\s*//' | grep -o '\\.unwrap()' | wc -l: zero.rs 32, waker.rs 6, select.rs 3",'tools/rs.py comment-stripped code counts; same (channel.rs has 43 but all in doc comments)')
q(5,'arrayvec','.','count','crate',
  "Total impl blocks across the entire arrayvec crate (trait impls plus inherent impls)?",
  'numeric',74,['impl'],'inherent and trait impls',
  "grep -cE '^\\s*(unsafe )?impl\\b' src/*.rs: 25+44+4+1",'ctags --kinds-Rust=c per file summed = 74')
q(5,'slab','.','count','crate',
  "How many distinct traits does the slab crate implement via impl blocks, across lib.rs and serde.rs? Count each trait name once.",
  'numeric',14,['impl'],'distinct trait names, impl blocks only',
  'tools/stats.py trait counter over crate','grep impl ... for | sed trait name | sort -u | wc -l = 14')
q(5,'arrayvec','.','count','crate',
  "Count every function item declared with `unsafe fn` in arrayvec's src (free functions, inherent methods, and trait methods including the one without a body).",
  'numeric',11,['unsafe fn'],'includes bodiless trait method declaration',
  "grep -rn 'unsafe fn' src | wc -l (char 1, array_string 1, arrayvec 7, arrayvec_impl 2)",'tools/rs.py fns filtered on unsafe fn over comment-stripped code: 11')
q(5,'semver','.','count','crate',
  "In semver 1.0.14, how many different traits have at least one explicit impl block somewhere in the crate (derives excluded)?",
  'numeric',20,['impl'],'explicit impl blocks only, distinct trait names',
  'tools/stats.py trait counter over crate: 20 keys','grep impl...for lines | sed trait name | sort | uniq -c; 20 lines')
q(5,'crossbeam-channel','.','argmax','crate',
  "Which crossbeam-channel source file defines the most fn items? Path relative to src/.",
  'exact',"channel.rs",['fn'],'',
  'ctags --kinds-Rust=fP per file: channel.rs 58, select.rs 45, list.rs 41','grep -cE fn-definition regex per file; same ranking')
for i,d in enumerate(Q,1):
    d2={'id':f'pc-A-{i:03d}','suite':'code'}
    d2.update({k:d[k] for k in ['level','query','checker','expected','domain','crate_version','source','kind','scope','targets','rules']})
    d2['writer']='A'; d2['method']=d['method']; d2['check']=d['check']
    Q[i-1]=d2
with open('/work/paraphrase/code/A/questions.jsonl','w',encoding='utf-8') as f:
    for d in Q: f.write(json.dumps(d,ensure_ascii=False)+'\n')
import collections
print(len(Q), collections.Counter(d['level'] for d in Q), collections.Counter(d['kind'] for d in Q))
