package jitsym

// maxRefHops bounds how many entries name resolution visits through
// DW_AT_abstract_origin and DW_AT_specification. Real chains have at most
// three entries (inlined instance, abstract instance, declaration).
const maxRefHops = 16

// maxScopeDepth bounds how many enclosing scopes a qualified name lists.
const maxScopeDepth = 64

// nameNodes sets the function name and start line of every node, as
// LLVM's DWARFDie::getSubroutineName(DINameKind::LinkageName) and
// getDeclLine do: the first DW_AT_linkage_name (or DW_AT_MIPS_linkage_name)
// found on the entry or the entries it refers to through
// DW_AT_abstract_origin and DW_AT_specification, else the DW_AT_name found
// the same way. Where LLVM stops at that short name, we qualify it with the
// namespaces and classes around the entry that has it, as the demangled
// linkage name would read: GCC gives no linkage name to functions with
// internal linkage, so an inlined static helper in namespace ns prints as
// "ns::helper", one in an anonymous namespace as
// "ns::(anonymous namespace)::helper". Two cases keep the short name: a
// DW_AT_external function without a linkage name has C linkage (extern "C"
// inside a namespace), and a scope that is an unnamed type (a lambda's
// closure) has no name to give.
func (b *builder) nameNodes() error {
	b.linkRefs()
	b.qualBudget = 4*int64(len(b.debugStr)+len(b.debugInfo)) + 1<<20
	for i := range b.s.nodes {
		n := &b.s.nodes[i]
		link, name, decl, external := b.find(b.nodeDie[i])
		if link >= 0 {
			n.fn = b.str(b.dies[link].linkage)
		}
		if n.fn == "" && name >= 0 {
			n.fn = b.str(b.dies[name].name)
			if sc := b.dies[name].scope; sc >= 0 && n.fn != "" && !external {
				if q := b.qualified(sc); q != "" && b.spendQual(len(q)+2+len(n.fn)) {
					n.fn = q + "::" + n.fn
				}
			}
		}
		if decl >= 0 {
			n.startLine = b.dies[decl].declLine
		}
	}
	return nil
}

// linkRefs resolves every entry's DW_AT_abstract_origin and
// DW_AT_specification offset to a dies index.
func (b *builder) linkRefs() {
	offs := make([]uint64, len(b.dies))
	for i := range b.dies {
		offs[i] = b.dies[i].off
	}
	at := func(off uint64) int32 {
		if off == 0 {
			return -1
		}
		i := searchHi(offs, off) - 1
		if i < 0 || offs[i] != off {
			return -1
		}
		return int32(i)
	}
	for i := range b.dies {
		d := &b.dies[i]
		d.originIdx, d.specIdx = at(d.origin), at(d.spec)
	}
}

// find visits die and the entries it refers to the way LLVM's
// DWARFDie::findRecursively does (a stack: the specification is tried
// before the abstract origin, each entry once) and returns the first that
// has a linkage name, the first that has a name, and the first that has a
// declaration line (-1 for none), and whether any has DW_AT_external.
func (b *builder) find(die int32) (link, name, decl int32, external bool) {
	link, name, decl = -1, -1, -1
	var work, seen [maxRefHops]int32
	nw, ns := 1, 1
	work[0], seen[0] = die, die
	for hops := 0; nw > 0 && hops < maxRefHops; hops++ {
		nw--
		d := &b.dies[work[nw]]
		if link < 0 && d.linkage != 0 {
			link = work[nw]
		}
		if name < 0 && d.name != 0 {
			name = work[nw]
		}
		if decl < 0 && d.hasDeclLine {
			decl = work[nw]
		}
		external = external || d.external
		for _, j := range [2]int32{d.originIdx, d.specIdx} {
			if j < 0 || ns == len(seen) || nw == len(work) || contains(seen[:ns], j) {
				continue
			}
			seen[ns], work[nw] = j, j
			ns++
			nw++
		}
	}
	return link, name, decl, external
}

func contains(s []int32, x int32) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// spendQual charges n bytes of qualified names to a budget proportional to
// the debug sections, so that deeply nested hostile input cannot make
// qualified names grow with the square of its size. It reports whether
// the budget allowed it; legitimate objects stay far below.
func (b *builder) spendQual(n int) bool {
	if b.qualBudget < int64(n) {
		return false
	}
	b.qualBudget -= int64(n)
	return true
}

// qualified returns the qualified name of scope i ("ns::Cls"), computing
// it once; "" when the budget is spent.
func (b *builder) qualified(i int32) string {
	if sc := &b.scopes[i]; sc.done {
		return sc.qual
	}
	// Collect the scopes from i outwards, stopping at one already done.
	var chain []int32
	prefix := ""
	bad := false // an unnamed scope outside: no qualified name
	for j := i; j >= 0 && len(chain) < maxScopeDepth; j = b.scopes[j].parent {
		if b.scopes[j].done {
			prefix, bad = b.scopes[j].qual, b.scopes[j].qual == ""
			break
		}
		chain = append(chain, j)
	}
	for k := len(chain) - 1; k >= 0; k-- {
		sc := &b.scopes[chain[k]]
		bad = bad || sc.unnamed
		switch {
		case bad:
			sc.qual = ""
		case prefix == "":
			sc.qual = sc.name
		case b.spendQual(len(prefix) + 2 + len(sc.name)):
			sc.qual = prefix + "::" + sc.name
		default:
			sc.qual = ""
		}
		sc.done = true
		prefix = sc.qual
	}
	return b.scopes[i].qual
}
