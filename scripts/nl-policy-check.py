#!/usr/bin/python3
"""Check the module's hand-written netlink policies and op table against
the family's YAML spec (the kernel's generator makes them from the spec
only for split ops, which 6.1 lacks).

Usage: nl-policy-check.py SPEC.yaml kmod/netlink.c uapi/linux/vmak.h

For every attribute set an operation uses: each attribute some request
carries has the policy its spec type and checks call for; every other one
is NLA_REJECT (reply only). For every operation: the op table has its
command with the set's policy, and doit/dumpit as the spec has do/dump.
Prints TAP.
"""
import re
import sys

import yaml

TYPES = {'u8': 'NLA_U8', 'u16': 'NLA_U16', 'u32': 'NLA_U32', 'u64': 'NLA_U64',
         'flag': 'NLA_FLAG', 'string': 'NLA_NUL_STRING', 'nest': 'NLA_NESTED',
         'binary': 'NLA_BINARY'}


def c_name(*parts):
    return '_'.join(p.upper().replace('-', '_') for p in parts)


def defines(text):
    return {m.group(1): int(m.group(2), 0) for m in
            re.finditer(r'#define\s+(\w+)\s+\(?(0x[0-9a-fA-F]+|\d+)U?\)?', text)}


def main():
    spec = yaml.safe_load(open(sys.argv[1]))
    src = open(sys.argv[2]).read()
    consts = defines(open(sys.argv[3]).read())
    fam = c_name(spec['name'])

    ranges = {}
    for m in re.finditer(r'struct netlink_range_validation (\w+) = \{(.*?)\};',
                         src, re.S):
        r = dict(re.findall(r'\.(min|max)\s*=\s*(\w+)', m.group(2)))
        ranges[m.group(1)] = {k: consts.get(v, v if not v.isdigit() else int(v))
                              for k, v in r.items()}
    policies = {}
    for m in re.finditer(r'nla_policy (\w+)_policy\[[^]]*\] = \{(.*?)\n\};',
                         src, re.S):
        ent = {}
        for e in re.finditer(r'\[(\w+)\]\s*=\s*(.*?),\s*\n', m.group(2) + '\n'):
            ent[e.group(1)] = re.sub(r'\s+', ' ', e.group(2))
        policies[m.group(1)] = ent
    ops = {}
    for m in re.finditer(r'\{([^{}]*\.cmd\s*=\s*(\w+)[^{}]*)\}', src):
        ops[m.group(2)] = dict(re.findall(r'\.(\w+)\s*=\s*(\w+)', m.group(1)))

    requests = {}
    for op in spec['operations']['list']:
        if 'attribute-set' not in op:
            continue		# notifications reuse another op's reply
        for mode in ('do', 'dump'):
            req = op.get(mode, {}).get('request', {}) or {}
            requests.setdefault(op['attribute-set'], set()).update(
                req.get('attributes', []))

    results = []

    def check(ok, what):
        results.append((ok, what))

    sets = {s['name']: s for s in spec['attribute-sets']}
    for set_name, wanted in requests.items():
        pol = policies.get(f"{spec['name']}_{set_name.replace('-', '_')}")
        check(pol is not None, f'policy of attribute set {set_name}')
        if pol is None:
            continue
        for attr in sets[set_name]['attributes']:
            enum = c_name(fam, 'a', set_name, attr['name'])
            got = pol.get(enum)
            if attr['name'] not in wanted:
                check(got == '{ .type = NLA_REJECT }',
                      f'{set_name}/{attr["name"]}: reply only, NLA_REJECT (is {got})')
                continue
            t = TYPES[attr['type']]
            chk = attr.get('checks', {}) or {}
            lo, hi = chk.get('min'), chk.get('max')
            if lo is None and hi is None:
                want = [f'{{ .type = {t} }}']
            elif hi is None:
                want = [f'NLA_POLICY_MIN({t}, {lo})']
            elif lo is None:
                want = [f'NLA_POLICY_MAX({t}, {hi})']
            else:
                want = [f'NLA_POLICY_RANGE({t}, {lo}, {hi})']
            ok = got in want
            fr = re.fullmatch(rf'NLA_POLICY_FULL_RANGE\({t}, &(\w+)\)', got or '')
            if fr and fr.group(1) in ranges:
                r = ranges[fr.group(1)]
                ok = r.get('min') == lo and r.get('max') == hi
            check(ok, f'{set_name}/{attr["name"]}: {want[0]} as the spec '
                      f'checks say (is {got})')

    for op in spec['operations']['list']:
        if 'do' not in op and 'dump' not in op:
            continue		# notifications
        cmd = c_name(fam, 'cmd', op['name'])
        o = ops.get(cmd)
        check(o is not None, f'op {op["name"]} in the op table')
        if o is None:
            continue
        pol = f"{spec['name']}_{op['attribute-set'].replace('-', '_')}_policy"
        check(o.get('policy') == pol, f'op {op["name"]} uses {pol}')
        check(('doit' in o) == ('do' in op), f'op {op["name"]}: doit as spec do')
        check(('dumpit' in o) == ('dump' in op), f'op {op["name"]}: dumpit as spec dump')

    for i, (ok, what) in enumerate(results, 1):
        print(f'{"ok" if ok else "not ok"} {i} - netlink policy: {what}')
    print(f'1..{len(results)}')
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == '__main__':
    sys.exit(main())
