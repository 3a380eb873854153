"""The commands over one tenant's memory: API keys, forgetting, retried extraction, audit
queries, ingest (messages or runs) and search (messages, or skills and cases)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from graphmem.cli.common import CALLER, Tenant, console, fail, progress_bar, tenant_memory
from graphmem.config import Settings
from graphmem.errors import GraphMemError, InvalidInput
from graphmem.models import ForgetMessages, MessageIn, SearchRequest
from graphmem.procedural.models import MAX_TRACES, SkillSearch, TraceIn

if TYPE_CHECKING:
    from graphmem.tenant_memory import TenantMemory

M = TypeVar("M", bound=BaseModel)
R = TypeVar("R")


class ForgetKind(StrEnum):
    message = "message"
    session = "session"
    trace = "trace"
    fact = "fact"


def forget_one(
    kind: Annotated[ForgetKind, typer.Argument(help="message | session | trace | fact")],
    id_: Annotated[str, typer.Argument(metavar="ID", help="Its id (a session's session id)")],
    owner: Annotated[str | None, typer.Option(
        help="The session's owner (needed for a session: session ids are per owner)")] = None,
    tenant: Tenant = "default",
) -> None:
    """Forget one message, session, trace or fact, and what rests only on it; prints the report
    (JSON). One transaction, audited (`graphmem audit deletions`)."""
    if kind is ForgetKind.session and owner is None:
        raise typer.BadParameter(f"a session id is per owner: say whose, e.g. graphmem forget "
                                 f"session {id_} --owner OWNER", param_hint="--owner")
    if kind is not ForgetKind.session and owner is not None:
        raise typer.BadParameter(f"--owner goes with a session only (a {kind.value} id names "
                                 f"one {kind.value})", param_hint="--owner")
    with tenant_memory(tenant) as tm:
        if owner is not None:
            report = tm.messages.forget_session(owner, id_)
        else:
            forgets = {"message": tm.messages.forget, "trace": tm.traces.forget,
                       "fact": tm.facts.forget}
            report = forgets[kind.value](id_)
    if report.already_forgotten:
        console.print(f"{kind.value} {id_!r} was already forgotten "
                      f"({to_jsonable_python(report.forgotten_at)})", highlight=False)
    # owner: a session's (and a filter's); for the other kinds it says nothing, so it is left out
    typer.echo(report.model_dump_json(indent=2, exclude={"owner"} if report.owner is None
                                      else None))


def forget_messages(
    owner: Annotated[str, typer.Option(help="Whose messages")],
    meta: Annotated[list[str] | None, typer.Option(
        "--meta", help="KEY=VALUE: messages with this metadata (as `graphmem search --meta`)")]
    = None,
    session: Annotated[str | None, typer.Option(help="Messages of this session")] = None,
    time_from: Annotated[str | None, typer.Option(
        "--from", help="Messages at or after this time (ISO 8601 with an offset)")] = None,
    time_to: Annotated[str | None, typer.Option(
        "--to", help="Messages before this time (ISO 8601 with an offset)")] = None,
    tenant: Tenant = "default",
) -> None:
    """Forget an owner's messages that every filter given matches (at least one), and what rests
    only on them; prints the report (JSON). One transaction, audited; more than
    max_forget_matching_messages (1,000) matching is refused with nothing deleted."""
    values: dict[str, Any] = {"owner": owner, "session_id": session, "time_from": time_from,
                              "time_to": time_to}
    if meta:
        values["metadata"] = metadata_filter(meta)
    req = _valid(ForgetMessages, values)
    with tenant_memory(tenant) as tm:
        report = tm.messages.forget_matching(req)
    typer.echo(report.model_dump_json(indent=2))


def owners(
    tenant: Tenant = "default",
    after: Annotated[str, typer.Option(help="Start after this owner (the previous page's "
                                       "last)")] = "",
    limit: Annotated[int, typer.Option(min=1, max=200)] = 50,
) -> None:
    """List the tenant's owners by name (anyone with a conversation, a fact or a run): one JSON
    line each (sessions, messages, last_message_at, facts, traces)."""
    with tenant_memory(tenant) as tm:
        for info in tm.messages.owners(after, limit):
            typer.echo(info.model_dump_json())


def export(
    owner: Annotated[str, typer.Option(help="Whose memory")],
    tenant: Tenant = "default",
    out: Annotated[Path | None, typer.Option(help="Write here (default: stdout)")] = None,
) -> None:
    """Export everything stored about an owner as JSON lines, one record each (kind, id,
    properties, links): messages, entities, episodes, facts with their history, agent runs
    with their steps, cases, clusters and skills with their versions."""
    with tenant_memory(tenant) as tm:
        try:
            records = tm.export_all(owner)
            count = 0
            with out.open("w", encoding="utf-8") if out else nullcontext(sys.stdout) as sink:
                for record in records:
                    sink.write(record.model_dump_json() + "\n")
                    count += 1
        except GraphMemError as exc:
            raise fail(exc) from None
    console.print(f"{count} records of {owner!r}" + (f" in {out}" if out else ""),
                  highlight=False)


def sessions(
    owner: Annotated[str, typer.Option(help="Whose sessions")],
    tenant: Tenant = "default",
    skip: Annotated[int, typer.Option(min=0, max=100_000)] = 0,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 100,
) -> None:
    """List an owner's sessions (conversations), the one with the latest message first: one
    JSON line each (session_id, message_count, first_at, last_at)."""
    with tenant_memory(tenant) as tm:
        for info in tm.messages.sessions(owner, skip, limit):
            typer.echo(info.model_dump_json())


class ExtractionStatus(StrEnum):
    all_dropped = "all_dropped"
    partial = "partial"
    empty = "empty"


def retry_extraction(
    status: Annotated[ExtractionStatus, typer.Option(
        help="Episodes whose last extraction ended so")] = ExtractionStatus.all_dropped,
    owner: Annotated[str | None, typer.Option(help="Only this owner's episodes")] = None,
    tenant: Tenant = "default",
) -> None:
    """Extract facts again from the episodes whose last extraction kept nothing (e.g. after
    changing the LLM or its prompt): enqueues one formation job per session; a worker
    (`graphmem worker`, or `serve --worker`) runs them. Prints the episodes and jobs (JSON)."""
    from graphmem.models import ExtractionRetryIn

    with tenant_memory(tenant) as tm:
        done = tm.jobs.retry_extraction(ExtractionRetryIn(status=status.value, owner=owner))
    typer.echo(done.model_dump_json(indent=2))


def audit_query(
    name: Annotated[str | None, typer.Argument(help="Query name; none: list them")] = None,
    param: Annotated[list[str] | None, typer.Option(
        "--param", "-p", help="NAME=VALUE, once per parameter (datetimes with an offset)")] = None,
    tenant: Tenant = "default",
) -> None:
    """Run a named audit query (cypher/audit/) read-only for the tenant; rows as JSON lines."""
    from graphmem import audit

    if name is None:
        for q in audit.all_queries():
            typer.echo(f"{q.name}: {q.purpose}")
        return
    raw = {}
    for item in param or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise typer.BadParameter(f"NAME=VALUE, not {item!r}", param_hint="--param")
        raw[key] = value
    with tenant_memory(tenant) as tm:
        rows = tm.audit.run(name, raw).rows
    for row in rows:  # date-times as the API writes them (UTC as Z)
        typer.echo(json.dumps(to_jsonable_python(row, fallback=str)))


def _batches(path: Path, fmt: str, batch: int) -> tuple[int, Iterable[list[MessageIn]]]:
    if fmt == "locomo":
        from graphmem.datasets import locomo

        messages = [m for c in locomo.load(path) for m in c.messages]
        return len(messages), (messages[i : i + batch] for i in range(0, len(messages), batch))
    from graphmem.datasets import jsonl

    return _checked(path, jsonl.parse), jsonl.read(path, batch)


def _checked(path: Path, parse: Callable[[str], object]) -> int:
    """How many records FILE holds, every line checked before Neo4j or the model is touched;
    a bad line is FILE:LINE: reason on stderr and exit code 2."""
    from graphmem.datasets import jsonl

    try:
        return jsonl.check(path, parse)
    except jsonl.BadLine as exc:
        console.print(f"{path}:{exc.line}: {exc.reason}", highlight=False, markup=False,
                      soft_wrap=True)
        raise typer.Exit(code=2) from None


def _trace_line(max_chars: int) -> Callable[[str], TraceIn]:
    """One line as a run, its messages read into steps as the API reads them."""
    from graphmem.datasets import jsonl
    from graphmem.procedural.steps import trace_steps

    def parse(line: str) -> TraceIn:
        trace = jsonl.parse_as(TraceIn, line)
        try:
            trace_steps(trace, "messages", max_chars)
        except InvalidInput as exc:
            raise ValueError(str(exc)) from None
        return trace
    return parse


def _ingest_traces(file: Path, tenant: str, batch: int) -> None:
    from graphmem.datasets import jsonl
    from graphmem.service import Memory

    settings = Settings()
    parse = _trace_line(settings.max_text_chars)
    total = _checked(file, parse)
    mem = Memory.open(settings)
    created = 0
    try:
        with progress_bar() as progress:
            task = progress.add_task("ingesting runs", total=total)
            # checked whole above; the service reads each run's steps as it stores it
            for runs in jsonl.read_with(partial(jsonl.parse_as, TraceIn), file,
                                        min(batch, MAX_TRACES)):
                report = mem.for_tenant(tenant, caller=CALLER).traces.ingest(runs)
                created += report.created
                progress.advance(task, len(report.ids))
    finally:
        mem.close()
    typer.echo(f"{total} runs read, {created} new, {total - created} already stored; their cases "
               "and skills form in the background (graphmem worker, or serve --worker)")


def _ingest_export(file: Path, tenant: str, batch: int) -> None:
    """An owner's export (`graphmem export`) stored again, in this tenant: its messages as they
    are read, batch by batch; then its facts (every version, as recorded), its runs (their
    steps come later in the file) and its document versions (as recorded, each key's oldest
    first; the topic trees built again from them). What was formed from them is formed again
    by the jobs."""
    from graphmem.datasets import jsonl
    from graphmem.lifecycle import export, restore
    from graphmem.service import Memory

    parse = partial(jsonl.parse_as, export.ExportRecord)
    _checked(file, parse)
    kept: list[export.ExportRecord] = []
    counts = {"messages": 0, "new": 0, "formed": 0}

    def messages() -> Iterator[list[MessageIn]]:
        for records in jsonl.read_with(parse, file, batch):
            kept.extend(r for r in records
                        if r.kind in ("fact", "trace", "step", "document", "section"))
            counts["formed"] += sum(1 for r in records if r.kind not in restore.STORED_AGAIN)
            if found := restore.messages_of(records):
                counts["messages"] += len(found)
                yield found

    mem = Memory.open(Settings())
    try:
        tm = mem.for_tenant(tenant, caller=CALLER)
        counts["new"] = sum(r.created for r in tm.messages.ingest_many(messages()))
        facts, facts_there = tm.facts.restore(kept)
        traces = restore.traces_of(kept)
        created = sum(tm.traces.ingest(traces[i:i + MAX_TRACES]).created
                      for i in range(0, len(traces), MAX_TRACES))
        docs, docs_there = tm.documents.restore(kept)
    finally:
        mem.close()
    typer.echo(f"{counts['messages']} messages ({counts['new']} new), {facts + facts_there} "
               f"fact versions ({facts} new), {len(traces)} runs ({created} new) and "
               f"{docs + docs_there} document versions ({docs} new) stored; "
               f"{counts['formed']} records formed from them are formed again by the jobs "
               "(topic trees at once)")


DOCUMENT_SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm", ".pdf")
"""The files `graphmem ingest --format document` reads, by suffix (a folder's others are
skipped)."""


def document_files(paths: Iterable[str]) -> tuple[list[tuple[Path, str]], list[tuple[str, str]]]:
    """The files PATH... name, each with its document key, and what names nothing: a file is
    keyed by its name; a folder's files (recursively; hidden ones and other suffixes skipped)
    and a glob's matches by their path relative to the folder (a glob's folder is the part
    before its first wildcard), with ``/`` between parts. Returns ([(file, key)], [(path,
    reason)]); a key given twice is a reason too (a second file would version the first)."""
    import glob as globbing

    found: list[tuple[Path, str]] = []
    bad: list[tuple[str, str]] = []

    def folder_files(root: Path) -> list[Path]:
        return sorted(p for p in root.rglob("*") if p.is_file()
                      and p.suffix.lower() in DOCUMENT_SUFFIXES
                      and not any(part.startswith(".") for part in p.relative_to(root).parts))

    for arg in paths:
        path = Path(arg)
        if path.is_file():
            found.append((path, path.name))
        elif path.is_dir():
            found += [(p, p.relative_to(path).as_posix()) for p in folder_files(path)]
        elif globbing.has_magic(arg):
            parts = Path(arg).parts
            fixed = next((i for i, part in enumerate(parts) if globbing.has_magic(part)),
                         len(parts))
            base = Path(*parts[:fixed]) if fixed else Path()
            matches = sorted(Path(m) for m in globbing.glob(arg, recursive=True))
            files = [m for m in matches if m.is_file()]
            for m in (m for m in matches if m.is_dir()):
                files += folder_files(m)
            if not files:
                bad.append((arg, "no file matches"))
            found += [(f, f.relative_to(base).as_posix()) for f in files]
        else:
            bad.append((arg, "no such file or folder"))
    first: dict[str, Path] = {}
    kept = []
    for file, key in found:
        if key in first:
            if first[key] != file:
                bad.append((str(file), f"its key {key!r} is {first[key]}'s already"))
            continue
        first[key] = file
        kept.append((file, key))
    return kept, bad


def _ingest_documents(paths: list[str], tenant: str, owner: str) -> None:
    """Each file as a document of ``owner`` (its media type from its suffix): a line per file
    (created, versioned, unchanged, or failed with the reason on stderr) and a summary; a file
    that fails leaves the others stored, and the exit code is 1."""
    from pydantic import ValidationError

    from graphmem.documents.models import DocumentIn
    from graphmem.documents.parse import SUFFIXES
    from graphmem.service import Memory

    files, bad = document_files(paths)
    for arg, reason in bad:
        console.print(f"failed     {arg}: {reason}", highlight=False, markup=False,
                      soft_wrap=True)
    counts = dict.fromkeys(("created", "versioned", "unchanged", "failed"), 0)
    counts["failed"] = len(bad)
    if files:
        mem = Memory.open(Settings())
        try:
            docs = mem.for_tenant(tenant, caller=CALLER).documents
            for file, key in files:
                media = SUFFIXES.get(file.suffix.lower())
                try:
                    if media is None:
                        raise InvalidInput("media_type", f"{file.suffix or 'no suffix'} is not "
                                           "read: .txt, .md, .markdown, .html, .htm or .pdf")
                    doc = DocumentIn(owner=owner, key=key, media_type=media, content="(file)")
                    wrote = docs.ingest(doc, file.read_bytes())
                except (InvalidInput, ValidationError, OSError) as exc:
                    reason = (
                        f"its key {key!r}: {exc.errors(include_url=False)[0]['msg']}"
                        if isinstance(exc, ValidationError) else exc.problem
                        if isinstance(exc, InvalidInput) and exc.field in ("content",
                                                                          "media_type")
                        else str(exc))
                    console.print(f"failed     {file}: {reason}", highlight=False,
                                  markup=False, soft_wrap=True)
                    counts["failed"] += 1
                    continue
                counts[wrote.action] += 1
                state = "" if wrote.state == "ready" else " (the worker embeds the rest)"
                typer.echo(f"{wrote.action:<10} {key}  {wrote.id}  {wrote.sections} sections, "
                           f"{wrote.chunks} chunks{state}")
        finally:
            mem.close()
    typer.echo(f"{len(files) + len(bad)} files: {counts['created']} created, "
               f"{counts['versioned']} versioned, {counts['unchanged']} unchanged, "
               f"{counts['failed']} failed")
    if counts["failed"]:
        raise typer.Exit(code=1)


FORMATS = ("jsonl", "locomo", "traces", "export", "document")


def ingest(
    paths: Annotated[list[str], typer.Argument(
        metavar="PATH", help="The file to read; with --format document, files, folders "
        "(read recursively) and globs (quote them: 'notes/**/*.md')", show_default=False)],
    tenant: Tenant = "default",
    format: Annotated[str, typer.Option(
        help="jsonl | locomo | traces | export | document")] = "jsonl",
    batch: int = 200,
    owner: Annotated[str | None, typer.Option(
        help="Whose documents (--format document only; required there)")] = None,
) -> None:
    """Store the messages of FILE (JSON lines of messages, or a LoCoMo file), or with --format
    traces the runs of an agent (JSON lines, one run per line, with the fields of POST
    /v1/traces), or with --format export an owner's export (`graphmem export`: messages, runs,
    facts and documents), or with --format document files as documents of --owner (.txt,
    .md/.markdown, .html/.htm, .pdf; the key is the path relative to the folder given, or
    the file name). A malformed line is reported as FILE:LINE: reason (exit 2) before anything
    is stored; a document that fails is reported and the others are stored (exit 1)."""
    if format not in FORMATS:
        raise typer.BadParameter(f"jsonl, locomo, traces, export or document, not {format!r}",
                                 param_hint="--format")
    if format == "document":
        if owner is None:
            raise typer.BadParameter("whose documents: --owner OWNER", param_hint="--owner")
        try:
            _ingest_documents(paths, tenant, owner)
        except GraphMemError as exc:
            raise fail(exc) from exc
        return
    if owner is not None:
        raise typer.BadParameter("--owner goes with --format document (messages, runs and "
                                 "exports name their owners)", param_hint="--owner")
    if len(paths) != 1:
        raise typer.BadParameter(f"--format {format} reads one file, not {len(paths)}",
                                 param_hint="PATH")
    file = Path(paths[0])
    if not file.is_file():
        raise typer.BadParameter(f"{'is a folder' if file.is_dir() else 'does not exist'}: "
                                 f"{file}", param_hint="FILE")
    try:
        if format == "traces":
            _ingest_traces(file, tenant, batch)
            return
        if format == "export":
            _ingest_export(file, tenant, batch)
            return
        total, batches = _batches(file, format, batch)
        from graphmem.service import Memory

        mem = Memory.open(Settings())
        created = 0
        try:
            with progress_bar() as progress:
                task = progress.add_task("ingesting", total=total)
                for report in mem.for_tenant(tenant, caller=CALLER).messages.ingest_many(batches):
                    created += report.created
                    progress.advance(task, len(report.ids))
        finally:
            mem.close()
    except (GraphMemError, UnicodeDecodeError, ValueError, KeyError, OSError) as exc:
        raise fail(exc if not isinstance(exc, KeyError) else ValueError(
            f"{file}: not a LoCoMo file (no {exc})")) from exc
    typer.echo(f"{total} messages read, {created} new, {total - created} already stored")


def search(
    query: str,
    owner: Annotated[str, typer.Option(help="Whose memory to search")],
    tenant: Tenant = "default",
    k: Annotated[int, typer.Option(help="How many hits; each brings the turns around it (its "
                                   "window) into the context")] = 10,
    method: Annotated[str, typer.Option(
        help="fulltext, vector, rrf, rrf_expand, rrf_windows, graph or iterative (see "
        "docs/retrieval.md)")] = "rrf_expand",
    order: Annotated[str, typer.Option(
        help="Hits in --json: relevance (best first) or time; the context is in time either "
        "way")] = "relevance",
    meta: Annotated[list[str] | None, typer.Option(
        "--meta", help="KEY=VALUE: only messages with this metadata (VALUE read as JSON when it "
        "parses: 2, true; else text); a key given twice accepts either value; also KEY!=VALUE, "
        "KEY>N, KEY>=N, KEY<N, KEY<=N")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole result as JSON")] = False,
) -> None:
    """Search an owner's memory and print the rendered context."""
    values: dict[str, Any] = {"query": query, "owner": owner, "k": k, "method": method,
                              "order": order}
    if meta:
        values["metadata"] = metadata_filter(meta)
    req = _valid(SearchRequest, values)
    result = _searched(tenant, lambda tm: tm.search(req))
    typer.echo(result.model_dump_json(indent=2) if as_json else result.context)


COMPARISONS = {">=": "gte", "<=": "lte", "!=": "ne", ">": "gt", "<": "lt"}
_OPTION = re.compile(r"^([^<>!=]+)(>=|<=|!=|>|<|=)(.*)$", re.DOTALL)


def metadata_filter(options: list[str]) -> dict[str, Any]:
    """``--meta`` options as a metadata filter: ``KEY=VALUE`` (a key given twice accepts
    either), ``KEY!=VALUE``, ``KEY>N``, ``KEY>=N``, ``KEY<N``, ``KEY<=N`` (the operators ne, gt,
    gte, lt, lte; a key's operators all hold). A value is read as JSON when it parses."""
    values: dict[str, list[Any]] = {}
    ops: dict[str, dict[str, Any]] = {}
    for option in options:
        found = _OPTION.match(option)
        if not found:
            raise typer.BadParameter(f"{option!r} is not KEY=VALUE (or KEY>=N, KEY!=VALUE, "
                                     "...)", param_hint="--meta")
        key, op, text = found.groups()
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        if isinstance(value, dict | list):
            value = text
        if op == "=":
            values.setdefault(key, []).append(value)
        else:
            ops.setdefault(key, {})[COMPARISONS[op]] = value
    out: dict[str, Any] = {k: vs[0] if len(vs) == 1 else vs for k, vs in values.items()}
    for key, asked in ops.items():
        if key in values:
            raise typer.BadParameter(f"{key}: give values (=) or comparisons, not both",
                                     param_hint="--meta")
        out[key] = asked
    return out


def _valid(model: type[M], values: dict[str, Any]) -> M:
    """A request from the command's options; a bad one names its option (exit 2)."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "query"
        raise typer.BadParameter(first["msg"], param_hint=f"--{where}") from None


def _searched(tenant: str, search: Callable[[TenantMemory], R]) -> R:
    """``search`` on the tenant's memory (the schema applied first); a GraphMemError is one
    line."""
    from graphmem.service import Memory

    try:
        mem = Memory.open(Settings())
        try:
            return search(mem.for_tenant(tenant, caller=CALLER))
        finally:
            mem.close()
    except GraphMemError as exc:
        raise fail(exc) from exc


class SkillUnits(StrEnum):
    skills = "skills"
    cases = "cases"


def skills(
    query: str,
    owner: Annotated[str, typer.Option(help="Whose procedural memory to search")],
    tenant: Tenant = "default",
    units: Annotated[SkillUnits, typer.Option(help="skills | cases")] = SkillUnits.skills,
    k: int = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole result as JSON")] = False,
) -> None:
    """Search an owner's skills (methods learned from runs) or single cases, for a request."""
    from graphmem.retrieval.packing import skill_piece

    req = _valid(SkillSearch, {"query": query, "owner": owner, "k": k, "units": units.value})
    result = _searched(tenant, lambda tm: tm.skills.search(req))
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    for skill in result.skills:
        typer.echo(f"## {skill.name} (version {skill.version}, {skill.id})\n"
                   f"{skill_piece(skill).item.text}\n")
    for case in result.cases:
        tools = " -> ".join(a.tool + ("*" if a.writes else "") for a in case.actions)
        typer.echo(f"## {case.outcome}: {case.intent} ({case.id})\n{tools or 'no tool call'}\n")
    if not result.skills and not result.cases:
        typer.echo(f"no {units.value} for {owner!r}")
