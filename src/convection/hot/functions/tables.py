"""Heat's function tables, one per ``heat_template_version``.

Each version's table is written as the previous one plus what changed, so a
reader sees exactly what each release added, replaced or removed, in the
order Heat shipped them. Three tables per version:

* ``FUNCTIONS[v]``: resources, outputs and ``if`` branches;
* ``CONDITION_FUNCTIONS[v]``: Heat's ``condition_functions`` (the functions
  *meant* for conditions);
* ``CONDITION_TABLES[v]``: the table the conditions section and ``if``
  conditions are actually parsed with: the condition functions, every other
  function of the version rejected as invalid in that context, and removed
  functions still reported as removed (as Heat's parser does).

A name absent from a version's table is plain data in that version, even if
a later version made it a function; :func:`introduced_in` lets the template
parser warn about that.
"""

from __future__ import annotations

from types import MappingProxyType

from convection.hot.functions import cfn, conditionals, refs, strings, yaql_fn
from convection.hot.functions import collections as colls
from convection.hot.functions.base import Function, FunctionTable

#: Every version, oldest first.
VERSIONS: tuple[str, ...] = (
    "2013-05-23",
    "2014-10-16",
    "2015-04-30",
    "2015-10-15",
    "2016-04-08",
    "2016-10-14",
    "2017-02-24",
    "2017-09-01",
    "2018-03-02",
    "2018-08-31",
    "2021-04-16",
)

Table = dict[str, type[Function]]


def _removed(*names: str) -> Table:
    return dict.fromkeys(names, cfn.Removed)


_HOT_2013: Table = {
    "Fn::GetAZs": cfn.GetAZs,
    "get_param": refs.GetParam,
    "get_resource": refs.GetResource,
    "Ref": cfn.Ref,
    "get_attr": refs.GetAttr,
    "Fn::Select": cfn.Select,
    "Fn::Join": cfn.CfnJoin,
    "list_join": strings.Join,
    "Fn::Split": cfn.Split,
    "str_replace": strings.Replace,
    "Fn::Replace": cfn.CfnReplace,
    "Fn::Base64": cfn.Base64,
    "Fn::MemberListToMap": cfn.MemberListToMap,
    "resource_facade": refs.ResourceFacade,
    "Fn::ResourceFacade": cfn.CfnResourceFacade,
    "get_file": refs.GetFile,
}
# Juno: the CloudFormation functions go, except Fn::Select.
_HOT_2014: Table = {
    **_HOT_2013,
    **_removed(
        "Fn::GetAZs",
        "Fn::Join",
        "Fn::Split",
        "Fn::Replace",
        "Fn::Base64",
        "Fn::MemberListToMap",
        "Fn::ResourceFacade",
        "Ref",
    ),
}
# Kilo.
_HOT_2015_04: Table = {**_HOT_2014, "repeat": colls.Repeat, "digest": strings.Digest}
# Liberty: get_attr of everything, several lists to join, JSON in str_replace.
_HOT_2015_10: Table = {
    **_HOT_2015_04,
    "get_attr": refs.GetAttrAll,
    "list_join": strings.JoinMultiple,
    "str_replace": strings.ReplaceJson,
    "str_split": strings.StrSplit,
    **_removed("Fn::Select"),
}
# Mitaka.
_HOT_2016_04: Table = {**_HOT_2015_10, "map_merge": colls.MapMerge}
# Newton ("if" is bound to its version's condition table below).
_HOT_2016_10: Table = {
    **_HOT_2016_04,
    "repeat": colls.RepeatWithMap,
    "yaql": yaql_fn.Yaql,
    "map_replace": colls.MapReplace,
}
# Ocata.
_HOT_2017_02: Table = {
    **_HOT_2016_10,
    "filter": colls.Filter,
    "str_replace_strict": strings.ReplaceJsonStrict,
}
# Pike.
_HOT_2017_09: Table = {
    **_HOT_2017_02,
    "repeat": colls.RepeatWithNestedLoop,
    "make_url": strings.MakeURL,
    "list_concat": colls.ListConcat,
    "str_replace_vstrict": strings.ReplaceJsonVeryStrict,
    "list_concat_unique": colls.ListConcatUnique,
    "contains": conditionals.Contains,
}

_CONDITIONS_2016: Table = {
    "get_param": refs.GetParam,
    "equals": conditionals.Equals,
    "not": conditionals.Not,
    "and": conditionals.And,
    "or": conditionals.Or,
}
_CONDITIONS_2017_09: Table = {
    **_CONDITIONS_2016,
    "yaql": yaql_fn.Yaql,
    "contains": conditionals.Contains,
}

#: version -> (functions without "if", condition functions, the "if" class)
_PLAN: dict[str, tuple[Table, Table, type[conditionals.If] | None]] = {
    "2013-05-23": (_HOT_2013, {}, None),
    "2014-10-16": (_HOT_2014, {}, None),
    "2015-04-30": (_HOT_2015_04, {}, None),
    "2015-10-15": (_HOT_2015_10, {}, None),
    "2016-04-08": (_HOT_2016_04, {}, None),
    "2016-10-14": (_HOT_2016_10, _CONDITIONS_2016, conditionals.If),
    "2017-02-24": (_HOT_2017_02, _CONDITIONS_2016, conditionals.If),
    "2017-09-01": (_HOT_2017_09, _CONDITIONS_2017_09, conditionals.If),
    "2018-03-02": (_HOT_2017_09, _CONDITIONS_2017_09, conditionals.If),  # Queens: none new
    "2018-08-31": (_HOT_2017_09, _CONDITIONS_2017_09, conditionals.If),  # Rocky: none new
    "2021-04-16": (_HOT_2017_09, _CONDITIONS_2017_09, conditionals.IfNullable),  # Wallaby
}


def _condition_table(functions: Table, conditions: Table) -> Table:
    """How Heat parses conditions: its own functions, the others refused."""
    table: Table = {
        name: fn if fn is cfn.Removed else conditionals.NotACondition
        for name, fn in functions.items()
    }
    table.update(conditions)
    return table


def _build() -> tuple[dict[str, FunctionTable], dict[str, FunctionTable], dict[str, FunctionTable]]:
    functions: dict[str, FunctionTable] = {}
    conditions: dict[str, FunctionTable] = {}
    parsers: dict[str, FunctionTable] = {}
    for version, (plain, conds, if_class) in _PLAN.items():
        table = dict(plain)
        if if_class is not None:
            table["if"] = if_class  # so the condition table refuses "if"
            parser = MappingProxyType(_condition_table(table, conds))
            table["if"] = type(
                if_class.__name__, (if_class,), {"__slots__": (), "conditions": parser}
            )
        else:
            parser = MappingProxyType(_condition_table(table, conds))
        functions[version] = MappingProxyType(table)
        conditions[version] = MappingProxyType(dict(conds))
        parsers[version] = parser
    return functions, conditions, parsers


FUNCTIONS, CONDITION_FUNCTIONS, CONDITION_TABLES = _build()

# CloudFormation formats (heat/engine/cfn/template.py): HeatTemplate is
# 2012-12-12, CfnTemplate 2010-09-09 (its own Fn::If and conditions).
_CFN_HEAT: Table = {
    "Fn::FindInMap": cfn.FindInMap,
    "Fn::GetAZs": cfn.GetAZs,
    "Ref": cfn.Ref,
    "Fn::GetAtt": cfn.GetAtt,
    "Fn::Select": cfn.Select,
    "Fn::Join": cfn.CfnJoin,
    "Fn::Split": cfn.Split,
    "Fn::Replace": cfn.CfnReplace,
    "Fn::Base64": cfn.Base64,
    "Fn::MemberListToMap": cfn.MemberListToMap,
    "Fn::ResourceFacade": cfn.CfnResourceFacade,
}
_CFN_CONDITIONS: Table = {
    "Fn::Equals": cfn.CfnEquals,
    "Ref": cfn.ParamRef,
    "Fn::FindInMap": cfn.FindInMap,
    "Fn::Not": cfn.CfnNot,
    "Fn::And": cfn.CfnAnd,
    "Fn::Or": cfn.CfnOr,
}


def _build_cfn() -> tuple[
    dict[str, FunctionTable], dict[str, FunctionTable], dict[str, FunctionTable]
]:
    parser = MappingProxyType(_condition_table({**_CFN_HEAT, "Fn::If": cfn.CfnIf}, _CFN_CONDITIONS))
    bound = type("CfnIf", (cfn.CfnIf,), {"__slots__": (), "conditions": parser})
    return (
        {
            "2012-12-12": MappingProxyType(dict(_CFN_HEAT)),
            "2010-09-09": MappingProxyType({**_CFN_HEAT, "Fn::If": bound}),
        },
        {"2010-09-09": MappingProxyType(dict(_CFN_CONDITIONS))},
        {"2010-09-09": parser},
    )


#: The CloudFormation formats' tables, by version; 2012-12-12 has no conditions.
CFN_FUNCTIONS, CFN_CONDITION_FUNCTIONS, CFN_CONDITIONS_TABLES = _build_cfn()


def introduced_in(name: str) -> str | None:
    """The first version whose function table has ``name`` (removed ones
    count: they are errors, not data), or None if none ever does.

    Condition functions (``equals``, ``not``, ...) are not counted: outside
    conditions they are plain data in every version, so no version is "newer".
    """
    return _INTRODUCED.get(name)


#: Each function name -> the first version that has it (the oldest version is
#: written last, so it wins). The template parser asks for every mapping of
#: one key that is not a function, so this is a lookup, not a search.
_INTRODUCED = {name: version for version in reversed(VERSIONS) for name in FUNCTIONS[version]}


def versions_having(name: str) -> list[str]:
    """The versions in which ``name`` is a function (removed ones excluded)."""
    return [v for v in VERSIONS if FUNCTIONS[v].get(name, cfn.Removed) is not cfn.Removed]
