"""TAS placement of podsets in one flavor's tree (``tas_flavor_snapshot.go``
``findTopologyAssignment``): the algorithm described in :mod:`jobsetctl.kueue.engine.tas`. Phase 1 (the
counts per domain, and their cache) is :mod:`jobsetctl.kueue.engine.tas_counts`.

:class:`Placement` is the half of :class:`~jobsetctl.kueue.engine.tas.TASFlavor` that places podsets; the
flavor supplies its tree, levels and remaining capacity.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jobsetctl.fakecluster.scheduler.podinfo import Toleration, parse_tolerations
from jobsetctl.fakecluster.scheduler.selectors import compile_required_node_affinity
from jobsetctl.kueue.engine.amounts import (
    PODS,
    Requests,
)
from jobsetctl.kueue.engine.tas_counts import Counting, Shape, StateOverlay
from jobsetctl.kueue.engine.tas_encoding import TopologyAssignment
from jobsetctl.kueue.engine.tas_order import place_in_order
from jobsetctl.kueue.engine.tas_tree import (
    MAX_INT32,
    Domain,
    DomainState,
    PodSetRequest,
    Stats,
    Tree,
    slice_constraints,
)
from jobsetctl.kueue.engine.tas_tree import as_mapping as _mapping

if TYPE_CHECKING:
    pass


_LOW = (1 << 32) - 1


class Placement(Counting):
    tolerations: tuple[Toleration, ...]
    levels: tuple[str, ...]
    name: str
    topology_name: str

    #: Per worker podset and per-pod requests (by identity, both kept alive here): what :meth:`_find` reads
    #: from them (:meth:`_shape`); and the same per contents.
    _shape_memo: dict[tuple[int, int, bool], tuple[dict[str, Any], Requests, Shape]]
    _shape_by_content: dict[tuple[Any, ...], Shape]
    #: Per topology request object (kept alive here): :meth:`has_level`.
    _has_level_memo: dict[int, tuple[dict[str, Any], bool]]

    def current_tree(self) -> Tree:
        raise NotImplementedError

    # ---- placement -------------------------------------------------------------------------------------
    def find_assignments(self, requests: list[PodSetRequest], *, simulate_empty: bool = False,
                         assumed: dict[str, Requests] | None = None) -> dict[str, tuple[TopologyAssignment | None, str]]:
        """``FindTopologyAssignmentsForFlavor``: per podset, the assignment or the failure reason."""
        result: dict[str, tuple[TopologyAssignment | None, str]] = {}
        assumed = {} if assumed is None else assumed
        groups: dict[str, list[PodSetRequest]] = {}
        for index, request in enumerate(requests):
            groups.setdefault(request.group if request.group is not None else str(index), []).append(request)
        for members in groups.values():
            leader: PodSetRequest | None = None
            workers = members[0]
            if len(members) > 1:
                leader = members[1]
                if leader.count > workers.count:
                    leader, workers = members[0], members[1]
            assignments, reason = self._find(workers, leader, assumed, simulate_empty)
            for member in members:
                result[member.name] = (assignments.get(member.name), reason)
            if reason:
                return result
            for member in members:
                assignment = assignments.get(member.name)
                if assignment is None:
                    continue
                tree = self.current_tree()
                for values, count in assignment.domains:
                    leaf_id = values[-1] if tree.lowest_is_node else ",".join(values)
                    usage = assumed.setdefault(leaf_id, {})
                    for name, value in member.per_pod.items():
                        usage[name] = usage.get(name, 0) + value * count
                    usage[PODS] = usage.get(PODS, 0) + count
        return result

    def level_index(self, key: str) -> int | None:
        try:
            return self.levels.index(key)
        except ValueError:
            return None

    def has_level(self, request: dict[str, Any] | None) -> bool:
        """``HasLevel``, remembered per request object (requests are replaced, never edited in place)."""
        if request is None:
            return self._has_level(request)
        hit = self._has_level_memo.get(id(request))
        if hit is not None and hit[0] is request:
            return hit[1]
        value = self._has_level(request)
        if len(self._has_level_memo) > 16384:
            self._has_level_memo.clear()
        self._has_level_memo[id(request)] = (request, value)
        return value

    def _has_level(self, request: dict[str, Any] | None) -> bool:
        main = self._level_key(request)
        if main is None:
            return False
        layers = slice_constraints(request)
        slice_key = layers[0][0] if layers else self.levels[-1]
        if self.level_index(main) is None or self.level_index(slice_key) is None:
            return False
        return all(self.level_index(topology) is not None for topology, _ in layers)

    def _level_key(self, request: dict[str, Any] | None) -> str | None:
        """``levelKey``."""
        if not request:
            return None
        if request.get("required") is not None:
            return str(request["required"])
        if request.get("preferred") is not None:
            return str(request["preferred"])
        if slice_constraints(request):
            return self.levels[0]
        if request.get("unconstrained") is True:
            return self.levels[-1]
        return None

    def _shape(self, workers: PodSetRequest) -> Shape:
        """What :meth:`_find` reads from the worker podset (its topology request, levels, scheduling
        constraints), remembered per podset object (podsets are replaced, never edited in place, and a
        workload is placed again at every attempt) and shared between podsets with the same contents
        (workloads of one class)."""
        memo_key = (id(workers.podset), id(workers.per_pod), workers.implied)
        hit = self._shape_memo.get(memo_key)
        if hit is not None and hit[0] is workers.podset and hit[1] is workers.per_pod:
            return hit[2]
        spec = _mapping(_mapping(workers.podset.get("template")).get("spec"))
        content = (repr(workers.podset.get("topologyRequest")), repr(spec.get("tolerations")),
                   repr(spec.get("nodeSelector")), repr(spec.get("affinity")), tuple(workers.per_pod.items()),
                   workers.implied)
        shape = self._shape_by_content.get(content)
        if shape is None:
            shape = self._compute_shape(workers)
            if len(self._shape_by_content) > 1024:
                self._shape_by_content.clear()
            self._shape_by_content[content] = shape
        if len(self._shape_memo) > 4096:
            self._shape_memo.clear()
        self._shape_memo[memo_key] = (workers.podset, workers.per_pod, shape)
        return shape

    def _compute_shape(self, workers: PodSetRequest) -> Shape:
        request = _mapping(workers.podset.get("topologyRequest")) or None
        tree = self.current_tree()
        per_pod = dict(workers.per_pod)
        per_pod[PODS] = per_pod.get(PODS, 0) + 1
        shape = Shape(per_pod)
        layers = slice_constraints(request)
        slice_size = 1
        if layers:
            slice_size = layers[0][1]
            if slice_size <= 0:
                shape.error = "slice topology requested, but slice size not provided"
                return shape
        required = bool(request) and request.get("required") is not None  # type: ignore[union-attr]
        unconstrained = (bool(request) and request.get("unconstrained") is True) or workers.implied or (  # type: ignore[union-attr]
            bool(layers) and request.get("required") is None and request.get("preferred") is None)  # type: ignore[union-attr]
        key = self._level_key(request)
        if key is None and workers.implied:
            key = self.levels[-1]
        if key is None:
            shape.error = "topology level not specified"
            return shape
        level_idx = self.level_index(key)
        if level_idx is None:
            shape.error = f"no requested topology level: {key}"
            return shape
        slice_key = layers[0][0] if layers else self.levels[-1]
        slice_idx = self.level_index(slice_key)
        if slice_idx is None:
            shape.error = f"no requested topology level for slices: {slice_key}"
            return shape
        if level_idx > slice_idx:
            shape.error = f"podset slice topology {slice_key} is above the podset topology {key}"
            return shape
        size_at_level: dict[int, int] = {}
        previous_size, previous_idx = slice_size, slice_idx
        for topology, size in layers[1:]:
            inner = self.level_index(topology)
            if inner is None:
                shape.error = f"no requested topology level for additional slice layer: {topology}"
                return shape
            if inner <= previous_idx:
                shape.error = (f"additional slice layer topology {topology} must be at a lower level than "
                               f"{self.levels[previous_idx]}")
                return shape
            if size <= 0 or previous_size % size != 0:
                shape.error = f"additional slice layer size {size} must evenly divide parent layer size {previous_size}"
                return shape
            for lvl in range(previous_idx + 1, inner + 1):
                size_at_level[lvl] = size
            previous_size, previous_idx = size, inner

        spec = _mapping(_mapping(workers.podset.get("template")).get("spec"))
        shape.spec = spec
        shape.tolerations = parse_tolerations(spec) + self.tolerations
        shape.selector = {str(k): str(v) for k, v in _mapping(spec.get("nodeSelector")).items()} if tree.lowest_is_node else {}
        shape.affinity = compile_required_node_affinity({}, spec.get("affinity"))
        shape.layers = layers
        shape.slice_size = slice_size
        shape.required = required
        shape.unconstrained = unconstrained
        shape.level_idx = level_idx
        shape.slice_idx = slice_idx
        shape.size_at_level = size_at_level
        sizes = tuple(sorted(size_at_level.items()))
        shape.counts_key = (tuple(sorted(per_pod.items())), repr(spec.get("tolerations")),
                            tuple(sorted(shape.selector.items())), repr(spec.get("affinity")), slice_size, slice_idx,
                            sizes)
        shape.result_key = (level_idx, slice_idx, slice_size, required, unconstrained, tuple(layers), sizes)
        return shape

    def _find(self, workers: PodSetRequest, leader: PodSetRequest | None, assumed: dict[str, Requests],
              simulate_empty: bool) -> tuple[dict[str, TopologyAssignment], str]:
        """``findTopologyAssignment``."""
        shape = self._shape(workers)
        if shape.error:
            return {}, shape.error
        tree = self.current_tree()
        # phase 1: counts per leaf, then up the tree
        if leader is None and not assumed and self.manager.placement_cache_enabled:
            stats = self._cached_counts(tree, shape, simulate_empty)
            # Phase 2 reads only the cached states and stats: while they are unchanged (no TAS usage moved
            # since), the same request gets the same answer. A cycle nominates one head per ClusterQueue,
            # many of the same shape, before anything is admitted.
            entry = self._current_entry
            result_key = (workers.name, workers.count, shape.result_key)
            hit = entry.results.get(result_key)
            if hit is None:
                if entry.order is not None and not shape.size_at_level:
                    hit = place_in_order(self, tree, entry.order, workers, shape)
                    if hit is None:
                        self.states.copies.clear()  # the full algorithm starts again from the cached counts
                if hit is None:
                    hit = self._place(tree, workers, None, 0, shape.level_idx, shape.slice_idx, shape.slice_size,
                                      shape.required, shape.unconstrained, shape.layers, shape.size_at_level, stats)
                entry.results[result_key] = hit
            # The assignments are only read (encoded, parsed back, summed into usage), never edited: the
            # cached ones are handed out, and their encodings are remembered per object.
            return dict(hit[0]), hit[1]
        per_pod = shape.per_pod
        leader_pod: Requests | None = None
        leader_count = 0
        if leader is not None:
            leader_pod = dict(leader.per_pod)
            leader_pod[PODS] = leader_pod.get(PODS, 0) + 1
            leader_count = 1
        layers = shape.layers
        slice_size = shape.slice_size
        required = shape.required
        unconstrained = shape.unconstrained
        level_idx = shape.level_idx
        slice_idx = shape.slice_idx
        size_at_level = shape.size_at_level
        tolerations = shape.tolerations
        selector = shape.selector
        affinity = shape.affinity
        self.states = [DomainState() for _ in range(tree.count)]
        stats = Stats()
        for leaf in tree.leaf_list:
            self._count_leaf(leaf, stats, tolerations, selector, affinity, per_pod, leader_pod, assumed,
                             simulate_empty)
        for root in tree.roots.values():
            self._fill(root, slice_size, slice_idx, 0, size_at_level, leader_count > 0)
        self.states = StateOverlay(self.states)
        return self._place(tree, workers, leader, leader_count, level_idx, slice_idx, slice_size, required,
                           unconstrained, layers, size_at_level, stats)

    def _place(self, tree: Tree, workers: PodSetRequest, leader: PodSetRequest | None, leader_count: int,
               level_idx: int, slice_idx: int, slice_size: int, required: bool, unconstrained: bool,
               layers: list[tuple[str, int]], size_at_level: dict[int, int],
               stats: Stats) -> tuple[dict[str, TopologyAssignment], str]:
        """Phase 2 of ``findTopologyAssignment``, on the counts of phase 1 (:attr:`states`)."""
        # phase 2a: the level and the domains that hold everything
        fit_level, fit, reason = self._find_level(level_idx, workers.count, slice_size, leader_count, required,
                                                  unconstrained, layers, stats)
        if reason:
            return {}, reason
        # phase 2b: down to the leaves
        fit = self._minimum(fit, workers.count, leader_count, slice_size, unconstrained, True)
        current = fit_level
        while current < min(len(tree.per_level) - 1, slice_idx):
            lower = self._sorted([c for d in fit for c in d.children], unconstrained)
            fit = self._minimum(lower, workers.count, leader_count, slice_size, unconstrained, True)
            current += 1
        while current < len(tree.per_level) - 1:
            size_on_level = slice_size
            if current >= slice_idx:
                size_on_level = size_at_level.get(current + 1, 1)
            new_fit: list[Domain] = []
            for domain in fit:
                children = self._sorted(domain.children, unconstrained)
                if size_on_level > 1:
                    for child in children:
                        state = self.states[child.idx]
                        state.slice_count = state.pod_count // size_on_level
                        state.slice_count_with_leader = state.pod_count_with_leader // size_on_level
                state = self.states[domain.idx]
                new_fit.extend(self._minimum(children, state.pod_count, state.leader_count, size_on_level,
                                             unconstrained, size_on_level > 1))
            fit = new_fit
            current += 1
        out: dict[str, TopologyAssignment] = {}
        if leader is not None:
            leader_domains: list[tuple[Domain, int]] = []
            worker_domains: list[Domain] = []
            for domain in fit:
                state = self.states[domain.idx]
                if state.leader_count > 0:
                    leader_domains.append((domain, state.leader_count))
                if state.pod_count > 0:
                    worker_domains.append(domain)
            out[leader.name] = self._build([(d, c) for d, c in leader_domains])
            fit = worker_domains
        out[workers.name] = self._build([(d, self.states[d.idx].pod_count) for d in fit])
        return out, ""

    def _least_free(self, unconstrained: bool) -> bool:
        return unconstrained and self.manager.engine.settings.gate("TASProfileMixed")

    def _sorted(self, domains: list[Domain], unconstrained: bool) -> list[Domain]:
        """``sortedDomains``: BestFit slices desc, LeastFreeCapacity slices asc; then pods asc; values."""
        # One state read per domain (the key is built for every domain of a level, hundreds per placement);
        # the index keeps equal keys in their order, as the stable sort on the domains did.
        # The key (sign x slices, pods, values, index) packed in one integer: the domains are of one
        # level, so their values sort as their ranks (Domain.rank); counts, ranks and indexes are below 2**32.
        copies = self.states.copies
        base = self.states.base
        keys = []
        sign = 1 if self._least_free(unconstrained) else -1
        for i, d in enumerate(domains):
            state = copies.get(d.idx) or base[d.idx]
            keys.append((((sign * state.slice_count << 32) + state.pod_count << 32) + d.rank << 32) + i)
        keys.sort()
        return [domains[k & _LOW] for k in keys]

    def _sorted_with_leader(self, domains: list[Domain], unconstrained: bool) -> list[Domain]:
        peek = self.states.peek
        value_key = self._value_key
        if self._least_free(unconstrained):
            def ascending(d: Domain) -> tuple[Any, ...]:
                state = peek(d.idx)
                return (-state.leader_count, state.slice_count_with_leader, state.pod_count_with_leader, value_key(d))
            return sorted(domains, key=ascending)

        def descending(d: Domain) -> tuple[Any, ...]:
            state = peek(d.idx)
            return (-state.leader_count, -state.slice_count_with_leader, state.pod_count_with_leader, value_key(d))
        return sorted(domains, key=descending)

    def _value_key(self, domain: Domain) -> Any:
        return domain.values

    def _best_fit(self, domains: list[Domain], needed: int, leader_count: int, slices: bool) -> Domain:
        """``findBestFitDomainBy``: the first domain with the smallest count that is enough."""
        copies = self.states.copies
        base = self.states.base
        if slices:
            attribute = "slice_count_with_leader" if leader_count > 0 else "slice_count"
        else:
            attribute = "pod_count_with_leader" if leader_count > 0 else "pod_count"
        best = domains[0]
        best_count = MAX_INT32
        found = False
        for domain in domains:
            state = copies.get(domain.idx) or base[domain.idx]  # StateOverlay.peek
            if state.leader_count < leader_count:
                continue
            count = getattr(state, attribute)
            if needed <= count < best_count:
                best, best_count, found = domain, count, True
        return best if found else domains[0]

    def _find_level(self, level_idx: int, count: int, slice_size: int, leader_count: int, required: bool,
                    unconstrained: bool, layers: list[tuple[str, int]], stats: Stats) -> tuple[int, list[Domain], str]:
        """``findLevelWithFitDomains``."""
        tree = self.current_tree()
        peek = self.states.peek
        domains = list(tree.per_level[level_idx].values())
        if not domains:
            return 0, [], f"no topology domains at level: {self.levels[level_idx]}"
        ordered = self._sorted_with_leader(domains, unconstrained)
        top = ordered[0]
        slice_count = count // slice_size
        best_fit = not self._least_free(unconstrained)

        def not_fit(fit_count: int, total: int) -> str:
            if len(layers) > 1:
                return self._multi_layer_message(level_idx, count, layers, stats)
            return self._not_fit_message(fit_count, total, slice_size, stats)

        if best_fit and peek(top.idx).slice_count_with_leader >= slice_count and peek(top.idx).leader_count >= leader_count:
            top = self._best_fit(ordered, slice_count, leader_count, True)
        if not best_fit:
            for candidate in ordered:
                state = peek(candidate.idx)
                capacity = state.slice_count
                if leader_count > 0:
                    if state.leader_count < leader_count:
                        continue
                    capacity = state.slice_count_with_leader
                if capacity >= slice_count:
                    return level_idx, [candidate], ""
            if required:
                return 0, [], not_fit(peek(ordered[-1].idx).pod_count, slice_count)
        if peek(top.idx).slice_count_with_leader < slice_count or peek(top.idx).leader_count < leader_count:
            if required:
                return 0, [], not_fit(peek(top.idx).slice_count, slice_count)
            if level_idx > 0 and not unconstrained:
                return self._find_level(level_idx - 1, count, slice_size, leader_count, required, unconstrained,
                                        layers, stats)
            results: list[Domain] = []
            remaining = slice_count
            remaining_leaders = leader_count
            ordered = self._prioritize_leader(ordered, count, leader_count, slice_size, True)
            idx = 0
            while remaining_leaders > 0 and idx < len(ordered) and peek(ordered[idx].idx).leader_count > 0:
                domain = ordered[idx]
                if best_fit and peek(domain.idx).slice_count_with_leader >= remaining:
                    domain = self._best_fit(ordered[idx:], remaining, remaining_leaders, True)
                results.append(domain)
                remaining_leaders -= peek(domain.idx).leader_count
                remaining -= peek(domain.idx).slice_count_with_leader
                idx += 1
            if remaining_leaders > 0:
                return 0, [], not_fit(leader_count - remaining_leaders, slice_count)
            rest = self._sorted(ordered[idx:], unconstrained)
            i = 0
            while remaining > 0 and i < len(rest):
                domain = rest[i]
                if best_fit and peek(domain.idx).slice_count >= remaining:
                    domain = self._best_fit(rest[i:], remaining, 0, True)
                results.append(domain)
                remaining -= peek(domain.idx).slice_count
                i += 1
            if remaining > 0:
                return 0, [], not_fit(slice_count - remaining, slice_count)
            return level_idx, results, ""
        return level_idx, [top], ""

    def _prioritize_leader(self, domains: list[Domain], count: int, leader_count: int, slice_size: int,
                           slices: bool) -> list[Domain]:
        """``prioritizeLeaderDomain``."""
        if leader_count == 0 or len(domains) < 2:
            return domains
        peek = self.states.peek
        required = count // slice_size if slices else count
        available = sum(peek(d.idx).slice_count if slices else peek(d.idx).pod_count for d in domains)
        for i, domain in enumerate(domains):
            state = peek(domain.idx)
            if state.leader_count < leader_count:
                continue
            penalty = (state.slice_count - state.slice_count_with_leader) if slices else \
                (state.pod_count - state.pod_count_with_leader)
            if available - penalty < required:
                continue
            if i == 0:
                return domains
            return [domain, *domains[:i], *domains[i + 1:]]
        return domains

    def _minimum(self, domains: list[Domain], count: int, leader_count: int, slice_size: int, unconstrained: bool,
                 slices: bool) -> list[Domain]:
        """``updateCountsToMinimumGeneric``: take domains in order until ``count`` pods (or slices) and the
        leaders are placed, replacing the last by the tightest that is enough (BestFit)."""
        states = self.states
        best_fit = not self._least_free(unconstrained)
        domains = self._prioritize_leader(domains, count, leader_count, slice_size, slices)
        result: list[Domain] = []
        remaining = count // slice_size if slices else count
        remaining_leaders = leader_count
        for i, dom in enumerate(domains):
            if remaining_leaders > 0:
                state = states[dom.idx]
                with_leader = state.slice_count_with_leader if slices else state.pod_count_with_leader
                if best_fit and with_leader >= remaining and state.leader_count >= remaining_leaders:
                    dom = self._best_fit(domains[i:], remaining, remaining_leaders, slices)
                    state = states[dom.idx]
                    with_leader = state.slice_count_with_leader if slices else state.pod_count_with_leader
                factor = slice_size if slices else 1
                if with_leader >= remaining and state.leader_count >= remaining_leaders:
                    if slices:
                        state.slice_count = remaining
                    else:
                        state.pod_count = remaining
                    state.leader_count = remaining_leaders
                    state.pod_count = remaining * factor
                    result.append(dom)
                    return result
                if with_leader > remaining:
                    with_leader = remaining
                if state.leader_count > remaining_leaders:
                    state.leader_count = remaining_leaders
                if slices:
                    state.slice_count_with_leader = with_leader
                    state.slice_count = with_leader
                else:
                    state.pod_count_with_leader = with_leader
                state.pod_count = with_leader * factor
                remaining_leaders -= state.leader_count
                remaining -= with_leader
                result.append(dom)
                continue
            if slices:
                if best_fit and states[dom.idx].slice_count >= remaining:
                    dom = self._best_fit(domains[i:], remaining, 0, True)
                state = states[dom.idx]
                state.leader_count = 0
                if state.slice_count >= remaining:
                    state.pod_count = remaining * slice_size
                    state.slice_count = remaining
                    result.append(dom)
                    return result
                state.pod_count = state.slice_count * slice_size
                remaining -= state.slice_count
                result.append(dom)
                continue
            if best_fit and states[dom.idx].pod_count >= remaining:
                dom = self._best_fit(domains[i:], remaining, 0, False)
            state = states[dom.idx]
            state.leader_count = 0
            if state.pod_count >= remaining:
                state.pod_count = remaining
                result.append(dom)
                return result
            remaining -= state.pod_count
            result.append(dom)
        return result

    def _build(self, domains: list[tuple[Domain, int]]) -> TopologyAssignment:
        """``buildAssignment``: lexicographic by level values; hostnames only for hostname topologies."""
        tree = self.current_tree()
        level = len(self.levels) - 1 if tree.lowest_is_node else 0
        ordered = sorted(domains, key=lambda item: item[0].values)
        return TopologyAssignment(list(self.levels[level:]),
                                  [(list(d.values[level:]), c) for d, c in ordered if c != 0])

    def _not_fit_message(self, fit: int, total: int, slice_size: int, stats: Stats) -> str:
        unit = "pod" if slice_size == 1 else "slice"
        if fit == 0:
            text = f'topology "{self.topology_name}" doesn\'t allow to fit any of {total} {unit}(s)'
        else:
            text = f'topology "{self.topology_name}" allows to fit only {fit} out of {total} {unit}(s)'
        if stats.has_exclusions():
            text += f". Total nodes: {stats.total}; excluded: {stats.reasons()}"
        return text

    def _multi_layer_message(self, level_idx: int, count: int, layers: list[tuple[str, int]], stats: Stats) -> str:
        text = f'topology "{self.topology_name}" doesn\'t allow to fit'
        tree = self.current_tree()
        peek = self.states.peek
        best: Domain | None = None
        for domain in tree.per_level[level_idx].values():
            state, best_state = peek(domain.idx), (peek(best.idx) if best else None)
            if best is None or state.slice_count > best_state.slice_count or (  # type: ignore[union-attr]
                    state.slice_count == best_state.slice_count and domain.id < best.id):  # type: ignore[union-attr]
                best = domain
        if best is None:
            return text
        for topology, size in layers:
            target = self.level_index(topology)
            if target is None or size <= 0:
                continue
            text += f"; {self._slices_in(best, level_idx, target, size)}/{count // size} slice(s) fit on level {topology}"
        if stats.has_exclusions():
            text += f". Total nodes: {stats.total}; excluded: {stats.reasons()}"
        return text

    def _slices_in(self, domain: Domain, level: int, target: int, size: int) -> int:
        if level == target:
            return self.states.peek(domain.idx).pod_count // size
        return sum(self._slices_in(child, level + 1, target, size) for child in domain.children)
