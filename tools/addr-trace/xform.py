#!/usr/bin/env python3
"""xform.py IN.ll OUT.ll CONFIG.json: tilec's raw NVPTX IR (-O0 --emit=llvm -g0)
-> host IR for rt.c.  Every inline asm call becomes a call to a stub that
records its operands and returns a value hashed from them (but the special
register reads and integer min of SEM: their meaning, from rt.c); shared-memory
stores are recorded (offset, bits) and kept; NVVM intrinsics call rt.c.
run_0 / run_1 call kernel 0 / 1 with the tensors and scalars of CONFIG
(tensor pointers are fake: only asm, i.e. the stubs, dereference them)."""
import json, re, sys

src = open(sys.argv[1]).read()
cfg = json.load(open(sys.argv[3]))
src = re.sub(r'^target (datalayout|triple).*$', '', src, flags=re.M)
src = re.sub(r' addrspace\(\d\)', '', src)
src = re.sub(r'@tl_smem = external global \[0 x i8\], align (\d+)',
             r'@tl_smem = global [262144 x i8] zeroinitializer, align \1', src)
# asm operands see the shared base as a fixed number (the host address differs per binary)
src = src.replace('ptrtoint (ptr @tl_smem to i32)', '65536').replace('ptrtoint (ptr @tl_smem to i64)', '65536')
INTR = ['llvm.nvvm.read.ptx.sreg.tid.x', 'llvm.nvvm.read.ptx.sreg.ctaid.x', 'llvm.nvvm.read.ptx.sreg.ctaid.y',
        'llvm.nvvm.read.ptx.sreg.nctaid.x', 'llvm.nvvm.read.ptx.sreg.nctaid.y',
        'llvm.nvvm.barrier0', 'llvm.maximum.f32', 'llvm.nvvm.shfl.sync.bfly.f32', 'llvm.nvvm.ex2.approx.f',
        'llvm.nvvm.ex2.approx.ftz.f']
for nm in INTR:
    src = src.replace('@' + nm + '(', '@' + nm.replace('.', '_') + '(')
left = set(re.findall(r'@llvm\.nvvm\.[\w.]+', src))
if left:
    sys.exit('xform.py: NVVM intrinsics without a stub in rt.c: ' + ' '.join(sorted(left)))
src = re.sub(r'^declare .*@llvm_.*$', '', src, flags=re.M)
src = re.sub(r'^attributes #.*$', '', src, flags=re.M)
src = re.sub(r' #\d+', '', src)


def split_args(s):
    out, depth, cur = [], 0, ''
    for ch in s:
        depth += ch in '([{<'
        depth -= ch in ')]}>'
        if ch == ',' and depth == 0:
            out.append(cur.strip())
            cur = ''
        else:
            cur += ch
    return out + [cur.strip()] if cur.strip() else out


def arg_type(a):
    if a[0] in '<{':
        return a[:a.index('>' if a[0] == '<' else '}') + 1]
    return a.split()[0]


def to_i64(t, v, n, body):
    if t == 'i64':
        return v
    if t in ('i32', 'i16', 'i8', 'i1'):
        body.append(f'%c{n} = zext {t} {v} to i64')
    elif t == 'float':
        body += [f'%b{n} = bitcast float {v} to i32', f'%c{n} = zext i32 %b{n} to i64']
    elif t in ('half', 'bfloat'):
        body += [f'%b{n} = bitcast {t} {v} to i16', f'%c{n} = zext i16 %b{n} to i64']
    elif t == 'ptr':
        body.append(f'%c{n} = ptrtoint ptr {v} to i64')
    else:
        sys.exit('xform.py: operand type ' + t)
    return f'%c{n}'


def from_hash(t, h, n, body):
    if t in ('i32', 'i16', 'i8', 'i1'):
        body.append(f'%r{n} = trunc i64 {h} to {t}')
    elif t == 'float':  # small floats, never inf / nan
        body += [f'%m{n} = and i64 {h}, 65535', f'%u{n} = uitofp i64 %m{n} to float',
                 f'%r{n} = fmul float %u{n}, 0x3F00000000000000']
    else:
        sys.exit('xform.py: result type ' + t)
    return f'%r{n}'


stubs, defs = {}, []


def stub(ret, text, types):
    key = (ret, text, tuple(types))
    if key not in stubs:
        sid = len(stubs)
        stubs[key] = f'@asmstub{sid}'
        body = [f'call void @rec_begin(i32 {sid})']
        for i, t in enumerate(types):
            body.append(f'call void @rec_arg(i64 {to_i64(t, f"%a{i}", i, body)})')
        body.append('%h = call i64 @rec_end()')
        if ret == 'void':
            body.append('ret void')
        elif ret.startswith('{'):
            cur = 'undef'
            for k, ft in enumerate(x.strip() for x in ret[1:-1].split(',')):
                body += [f'%hh{k} = add i64 %h, {k * 7919}', f'%hk{k} = mul i64 %hh{k}, 2654435761']
                v = from_hash(ft, f'%hk{k}', 100 + k, body)
                body.append(f'%s{k} = insertvalue {ret} {cur}, {ft} {v}, {k}')
                cur = f'%s{k}'
            body.append(f'ret {ret} {cur}')
        else:
            body.append(f'ret {ret} {from_hash(ret, "%h", 99, body)}')
        params = ', '.join(f'{t} %a{i}' for i, t in enumerate(types))
        defs.append(f'define internal {ret} @asmstub{sid}({params}) {{\n  ' + '\n  '.join(body) + '\n}\n')
    return stubs[key]


# asm whose result addresses or steers (not data): its meaning in rt.c, not recorded
SEM = {'mov.u32 $0, %tid.x;': '@rt_tid', 'mov.u32 $0, %laneid;': '@rt_laneid', 'mov.u32 $0, 1;': '@rt_one',
       '{ .reg .pred p; setp.lt.s32 p, $1, $2; selp.b32 $0, $1, $2, p; }': '@rt_min_s32'}
ASM = re.compile(r'call (void|i\d+|float|half|bfloat|\{[^}]*\}) asm (?:sideeffect )?'
                 r'"((?:[^"\\]|\\.)*)", "((?:[^"\\]|\\.)*)"\((.*)\)$')
STORE = re.compile(r'^(\s+)store (i1|i8|i16|i32|i64|float|half|bfloat) (\S+), ptr (%[\w.]+)(, align \d+)?$')
TRUNC_BF = re.compile(r'^(\s+)(%[\w.]+) = fptrunc float (\S+) to bfloat')
out, n = [], 0
for ln in src.split('\n'):
    m = ASM.search(ln)
    if m:
        ret, text, args = m.group(1), m.group(2), m.group(4)
        a = split_args(args) if args.strip() else []
        fn = SEM.get(text) or stub(ret, text, [arg_type(x) for x in a])
        ln = ln[:m.start()] + f'call {ret} {fn}({", ".join(a)})'
    m = STORE.match(ln)
    if m and not m.group(4).startswith('%ring'):  # the ring counters are allocas, not shared memory
        n += 1
        ind, body = m.group(1), []
        v = to_i64(m.group(2), m.group(3), f's{n}', body)
        out += [ind + b for b in body]
        out += [f'{ind}%sp{n} = ptrtoint ptr {m.group(4)} to i64', f'{ind}call void @rec_store(i64 %sp{n}, i64 {v})']
    m = TRUNC_BF.match(ln)
    if m:  # the host has no bf16 arithmetic: round to nearest even in rt.c
        n += 1
        out.append(f'{m.group(1)}%bf{n} = call i16 @f2bf(float {m.group(3)})')
        ln = f'{m.group(1)}{m.group(2)} = bitcast i16 %bf{n} to bfloat'
    out.append(ln)
src = '\n'.join(out)

drv = []
kernels = re.findall(r'^define void @(\w+)\((.*)\)', src, flags=re.M)
for ki, (name, params) in enumerate(kernels):
    k = cfg['kernels'][name]
    tens, scal, ps, vals, i = list(k['tensors']), list(k.get('scalars', [])), split_args(params), [], 0
    while i < len(ps):
        if ps[i].split()[0] == 'ptr':  # ptr, R x i32 sizes, R x i64 strides
            t = tens.pop(0)
            vals.append(f'ptr inttoptr (i64 {t["ptr"]} to ptr)')
            vals += [f'i32 {x}' for x in t['size']] + [f'i64 {x}' for x in t['stride']]
            i += 1 + 2 * len(t['size'])
        else:
            vals.append(f'{ps[i].split()[0]} {scal.pop(0)}')
            i += 1
    drv.append(f'define void @run_{ki}() {{\n  call void @{name}({", ".join(vals)})\n  ret void\n}}\n')
# run_kernel(k): kernel k of the module
sw = ''.join(f'    i32 {ki}, label %k{ki}\n' for ki in range(len(kernels)))
cases = ''.join(f'k{ki}:\n  call void @run_{ki}()\n  ret void\n' for ki in range(len(kernels)))
drv.append(f'define void @run_kernel(i32 %k) {{\n  switch i32 %k, label %none [\n{sw}  ]\n{cases}none:\n  ret void\n}}\n')
hdr = '''declare i16 @f2bf(float)
declare i32 @rt_tid()
declare i32 @rt_laneid()
declare i32 @rt_one()
declare i32 @rt_min_s32(i32, i32)
declare void @rec_begin(i32)
declare void @rec_arg(i64)
declare i64 @rec_end()
declare void @rec_store(i64, i64)
declare i32 @llvm_nvvm_read_ptx_sreg_tid_x()
declare i32 @llvm_nvvm_read_ptx_sreg_ctaid_x()
declare i32 @llvm_nvvm_read_ptx_sreg_ctaid_y()
declare i32 @llvm_nvvm_read_ptx_sreg_nctaid_x()
declare i32 @llvm_nvvm_read_ptx_sreg_nctaid_y()
declare void @llvm_nvvm_barrier0()
declare float @llvm_maximum_f32(float, float)
declare float @llvm_nvvm_shfl_sync_bfly_f32(i32, float, i32, i32)
declare float @llvm_nvvm_ex2_approx_f(float)
declare float @llvm_nvvm_ex2_approx_ftz_f(float)
'''
open(sys.argv[2], 'w').write(src + '\n' + hdr + '\n'.join(defs) + '\n'.join(drv))
# the stub ids of the trace lines (A<id>): OUT.ll.stubs, one "id text" a line
with open(sys.argv[2] + '.stubs', 'w') as f:
    for (ret, text, types), name in stubs.items():
        f.write(f'{name[len("@asmstub"):]} {text}\n')
