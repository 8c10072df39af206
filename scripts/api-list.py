#!/usr/bin/env python3
"""Turns a `swift-api-digester -dump-sdk` JSON file into the text listing scripts/api-check.sh compares: one line per
public declaration, with its kind, its full name, its signature and what else a user's code can depend on (generic
requirements, conformances, setters, `static`, `mutating`, `throws`, default arguments, deprecation), sorted, so that
a change to the API is a readable line in a diff.

    scripts/api-list.py DUMP.json [SWIFT_DEMANGLE] > api/MODULE.txt
"""
import json
import re
import subprocess
import sys

# Attributes that change nothing a caller writes (storage, transparency, ABI details) are left out.
IGNORED_ATTRIBUTES = {
    "HasStorage", "Transparent", "Inlinable", "UsableFromInline", "AlwaysEmitIntoClient", "Frozen", "FixedLayout",
    "HasInitialValue", "Implements", "Semantics", "Effects", "InlineAlways", "Inline", "NonOverride", "Override",
    "Optimize", "Exported", "ImplementationOnly", "RawDocComment", "AccessControl", "SetterAccess", "Nonisolated",
}
SKIPPED_KINDS = {"Import", "Conformance", "Accessor"}
TYPE_KINDS = {"TypeNominal", "TypeFunc", "TypeNameAlias"}


def strip(text, module):
    return text.replace(module + ".", "")


def describe(node, module, spi=False):
    """What the mangled name does not say: the kind, default arguments, setters, attributes, conformances.
    `spi`: the declaration is inside a type public only to an SPI, so it is that SPI's too."""
    kind = node.get("declKind", node["kind"])
    parts = [kind.lower()]
    if node.get("funcSelfKind") == "Mutating":
        parts.insert(0, "mutating")
    types = [c for c in node.get("children", []) if c["kind"] in TYPE_KINDS]
    if node["kind"] in ("Function", "Constructor", "Subscript"):
        labels = node.get("printedName", "").partition("(")[2].rstrip(")").split(":")
        defaults = []
        for index, param in enumerate(types[1:]):
            if param.get("hasDefaultArg"):
                label = labels[index] if index < len(labels) and labels[index] not in ("", "_") else f"#{index + 1}"
                defaults.append(label)
        if defaults:
            parts.append("defaults: " + ", ".join(defaults))
    elif node.get("declKind") == "Var":
        accessors = sorted(a.get("accessorKind", a["name"]) for a in node.get("accessors", []))
        parts.append("{ " + " ".join(accessors) + " }")
    attributes = sorted(a for a in node.get("declAttributes", []) if a not in IGNORED_ATTRIBUTES)
    if spi and "SPIAccessControl" not in attributes:
        attributes = sorted(attributes + ["SPIAccessControl"])
    if attributes:
        parts.append("@" + " @".join(attributes))
    if node.get("deprecated"):
        parts.append("deprecated")
    conformances = sorted(strip(c["printedName"], module) for c in node.get("conformances", []))
    if conformances:
        parts.append("conforms to " + ", ".join(conformances))
    return " ".join(parts)


def listed(node):
    return not (node["kind"] in SKIPPED_KINDS or node["kind"] in TYPE_KINDS or node.get("isInternal"))


def walk(node, path, module, entries, spi=False):
    for child in node.get("children", []):
        # isInternal: `package` (and `@usableFromInline internal`) declarations, which users cannot call.
        if not listed(child):
            continue
        # Another module's type that this one extends is listed only for what the extension makes public.
        if child.get("isExternal") and not any(listed(grandchild) for grandchild in child.get("children", [])):
            continue
        name = child.get("printedName", child.get("name", "?"))
        inner = spi or "SPIAccessControl" in child.get("declAttributes", [])
        entries.append((".".join(path + [name]), child, spi))
        walk(child, path + [name], module, entries, inner)


def main():
    with open(sys.argv[1]) as file:
        root = json.load(file)["ABIRoot"]
    module = root["name"]
    entries = []
    walk(root, [], module, entries)
    # The mangled name holds the whole signature (generic requirements, async, throws, @Sendable, static):
    # swift-demangle, beside the digester in the toolchain, spells it out.
    mangled = [node.get("mangledName", "") for _, node, _ in entries]
    demangled = subprocess.run(
        [sys.argv[2] if len(sys.argv) > 2 else "swift-demangle"], input="\n".join(mangled) + "\n",
        capture_output=True, text=True, check=True).stdout.split("\n")
    lines = set()
    for (path, node, spi), signature in zip(entries, demangled):
        signature = signature.strip() if node.get("mangledName") else path
        lines.add(re.sub(r"\b" + re.escape(module) + r"\.", "", signature) + "  [" + describe(node, module, spi) + "]")
    print(f"# The public API of {module}: scripts/api-check.sh --update writes this file from the debug build.")
    for line in sorted(lines):
        print(line)


if __name__ == "__main__":
    main()
