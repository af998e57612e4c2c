"""Gemini's repairs: one spelling per field, genai Schema parameters, and call/response parts.

`fix(fixer, payload)` is this dialect's fixer (see `wire.fix`): it repairs `payload` in place."""

from __future__ import annotations

from typing import Any

from ...fix import Fixer, note_changes
from ...pointer import join, split
from ...rules import arguments
from ...rules.base import as_list
from .fields import doubled, field as gfield
from .schema import Change, to_genai


def fix(fixer: Fixer, payload: dict[str, Any]) -> None:
    # A field in both spellings (GM-16): the camelCase one is what the bridge reads, so it stays.
    for where, name in doubled(payload):
        *path, key = split(where)
        parent: Any = payload
        for token in path:
            parent = parent[int(token)] if isinstance(parent, list) else parent.get(token)
            if not isinstance(parent, (dict, list)):
                break
        if isinstance(parent, dict) and key in parent:  # absent when an enclosing twin went first
            del parent[key]
            fixer.note("GM-16", where, "removed", f"the snake_case twin of {name!r} removed; the camelCase one stays")
    taken: set[str] = set()
    for index, tool in enumerate(as_list(payload.get("tools"))):
        if not isinstance(tool, dict):
            continue
        key, decls = gfield(tool, "functionDeclarations")
        if not isinstance(decls, list):
            continue
        kept = []
        for position, decl in enumerate(decls):
            where = join("/tools", index, key, position)
            if not isinstance(decl, dict) or not isinstance(decl.get("name"), str) or not decl["name"]:
                fixer.note("GM-02", where, "dropped", "declaration without a name dropped")
                continue
            decl["name"] = fixer.name(decl["name"], "GM-02", join(where, "name"))
            params_key, parameters = gfield(decl, "parameters")
            json_key, json_schema = gfield(decl, "parametersJsonSchema")
            if parameters is not None and json_schema is not None:
                del decl[params_key]
                fixer.note("GM-05", join(where, params_key), "removed", "parameters removed: parametersJsonSchema "
                                                                       "carries the schema")
            elif isinstance(parameters, dict):
                changes: list[Change] = []
                decl[params_key] = to_genai(parameters, join(where, params_key), "", changes, root=True, respell=False)
                note_changes(fixer, changes, "GM-04")
            if fixer.keep_first(decl["name"], taken, "GM-14", where, "declaration"):
                kept.append(decl)
        tool[key] = kept
    if isinstance(payload.get("contents"), list):
        for index, content in enumerate(payload["contents"]):
            for position, part in enumerate(content.get("parts", []) if isinstance(content, dict)
                                             and isinstance(content.get("parts"), list) else []):
                if not isinstance(part, dict):
                    continue
                key, call = gfield(part, "functionCall")
                where = join("/contents", index, "parts", position, key)
                if isinstance(call, dict):
                    if isinstance(call.get("name"), str):
                        call["name"] = fixer.name(call["name"], "GM-02", join(where, "name"))
                    if "args" in call and call["args"] is not None and not isinstance(call["args"], dict):
                        call["args"], note = arguments.as_object(call["args"])
                        fixer.note("GM-08", join(where, "args"), "converted", note or "args decoded")
                rkey, response = gfield(part, "functionResponse")
                if isinstance(response, dict):
                    rwhere = join("/contents", index, "parts", position, rkey)
                    if isinstance(response.get("name"), str):
                        response["name"] = fixer.name(response["name"], "GM-02", join(rwhere, "name"))
                    if not isinstance(response.get("response"), dict):
                        response["response"] = {"output": response.get("response")}
                        fixer.note("GM-09", join(rwhere, "response"), "wrapped", "response wrapped as {\"output\": …}")
