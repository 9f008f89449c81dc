#!/usr/bin/python3
"""Checks rendered Kubernetes manifests (multi-document YAML on stdin or in a file) against the
API models of Debian's python3-kubernetes: every object's kind must be known, every field must
be one the model has (unknown fields rejected, recursively), every value of the model's type,
and the client's own deserializer must accept it (required fields).
usage: check_manifests.py [FILE]   exit 1 with one line per problem"""
import datetime
import re
import sys

import kubernetes.client as k8s
import yaml

PRIMITIVE = {"str": str, "int": int, "bool": bool, "float": (int, float)}



def check(value, type_name, where, problems):
    if value is None:
        return
    m = re.fullmatch(r"list\[(.+)\]", type_name)
    if m:
        if not isinstance(value, list):
            problems.append(f"{where}: expected a list, got {type(value).__name__}")
            return
        for i, item in enumerate(value):
            check(item, m.group(1), f"{where}[{i}]", problems)
        return
    m = re.fullmatch(r"dict\(str, (.+)\)", type_name)
    if m:
        if not isinstance(value, dict):
            problems.append(f"{where}: expected a map, got {type(value).__name__}")
            return
        for key, item in value.items():
            check(item, m.group(1), f"{where}.{key}", problems)
        return
    if type_name in PRIMITIVE:
        ok = isinstance(value, PRIMITIVE[type_name]) and not (
            type_name != "bool" and isinstance(value, bool))
        if not ok:
            problems.append(f"{where}: expected {type_name}, got {type(value).__name__} {value!r}")
        return
    if type_name in ("object", "datetime", "date"):
        if type_name != "object" and not isinstance(value, (str, datetime.date)):
            problems.append(f"{where}: expected a time, got {value!r}")
        return
    cls = getattr(k8s, type_name, None)
    if cls is None:
        problems.append(f"{where}: the client has no model {type_name}")
        return
    if not isinstance(value, dict):
        problems.append(f"{where}: expected an object ({type_name}), got {type(value).__name__}")
        return
    by_json = {json_key: attr for attr, json_key in cls.attribute_map.items()}
    for key, item in value.items():
        if key not in by_json:
            problems.append(f"{where}.{key}: unknown field of {type_name}")
            continue
        check(item, cls.openapi_types[by_json[key]], f"{where}.{key}", problems)


def main():
    text = open(sys.argv[1]).read() if len(sys.argv) > 1 else sys.stdin.read()
    problems, kinds = [], []
    api = k8s.ApiClient()
    for doc in yaml.safe_load_all(text):
        if not doc:
            continue
        name = doc.get("apiVersion", "?").split("/")[-1].capitalize() + doc.get("kind", "?")
        where = f"{doc.get('kind')}/{doc.get('metadata', {}).get('name')}"
        if not hasattr(k8s, name):
            problems.append(f"{where}: no model {name} for apiVersion {doc.get('apiVersion')}")
            continue
        check(doc, name, where, problems)
        try:
            api._ApiClient__deserialize(doc, name)  # required fields, enum-free type checks
        except (ValueError, TypeError) as e:
            problems.append(f"{where}: rejected by the client's {name}: {e}")
        kinds.append(where)
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(f"{len(kinds)} objects match the API models: {', '.join(kinds)}")


if __name__ == "__main__":
    main()
