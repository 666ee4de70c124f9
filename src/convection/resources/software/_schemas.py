"""The property schemas the software types share, as Heat declares them.

Heat builds StructuredConfig, SoftwareComponent and the deployment groups by
reusing SoftwareConfig's and SoftwareDeployment's schema entries; so do we,
from this one module, so the types cannot drift apart.
"""

from __future__ import annotations

from typing import Final

from convection.hot import AllowedValues, Length, Range
from convection.resources._schema import PropertySchema, PropertyType
from convection.software import DEFAULT_ACTIONS, DEPLOY_ACTIONS, SIGNAL_TRANSPORTS, UNGROUPED

IO_TYPES: Final = ("String", "Number", "CommaDelimitedList", "Json", "Boolean")

#: Heat's default (``default_deployment_signal_transport``). Convection runs
#: the config itself and has its result when the run ends, so every transport
#: but NO_SIGNAL behaves alike: the deployment completes with the result.
DEFAULT_SIGNAL_TRANSPORT: Final = "CFN_SIGNAL"

GROUP = PropertySchema(
    type=PropertyType.STRING,
    description="Namespace to group this software config by when delivered to a server. "
    "This may imply what configuration tool is going to perform the configuration.",
    default=UNGROUPED,
)
CONFIG_TEXT = PropertySchema(
    type=PropertyType.STRING,
    description="Configuration script or manifest which specifies what actual "
    "configuration is performed.",
)
OPTIONS = PropertySchema(
    type=PropertyType.MAP,
    description="Map containing options specific to the configuration management "
    "tool used by this resource.",
)
_IO_TYPE = PropertySchema(
    type=PropertyType.STRING,
    description="Type of the value of the input.",
    default="String",
    constraints=(AllowedValues(IO_TYPES),),
)
INPUTS = PropertySchema(
    type=PropertyType.LIST,
    description="Schema representing the inputs that this software config is expecting.",
    schema=PropertySchema(
        type=PropertyType.MAP,
        schema={
            "name": PropertySchema(
                type=PropertyType.STRING, description="Name of the input.", required=True
            ),
            "description": PropertySchema(
                type=PropertyType.STRING, description="Description of the input."
            ),
            "type": _IO_TYPE,
            "default": PropertySchema(
                type=PropertyType.ANY,
                description="Default value for the input if none is specified.",
            ),
            "replace_on_change": PropertySchema(
                type=PropertyType.BOOLEAN,
                description="Replace the deployment instead of updating it when the input "
                "value changes.",
                default=False,
            ),
        },
    ),
)
OUTPUTS = PropertySchema(
    type=PropertyType.LIST,
    description="Schema representing the outputs that this software config will produce.",
    schema=PropertySchema(
        type=PropertyType.MAP,
        schema={
            "name": PropertySchema(
                type=PropertyType.STRING, description="Name of the output.", required=True
            ),
            "description": PropertySchema(
                type=PropertyType.STRING, description="Description of the output."
            ),
            "type": _IO_TYPE,
            "error_output": PropertySchema(
                type=PropertyType.BOOLEAN,
                description="Denotes that the deployment is in an error state if this "
                "output has a value.",
                default=False,
            ),
        },
    ),
)

DEPLOY_CONFIG = PropertySchema(
    type=PropertyType.STRING,
    description="ID of software configuration resource to execute when applying to the server.",
    update_allowed=True,
)
DEPLOY_SERVER = PropertySchema(
    type=PropertyType.STRING,
    description="ID of resource to apply configuration to. Normally this should be a "
    "Nova server ID.",
    required=True,
)
DEPLOY_INPUT_VALUES = PropertySchema(
    type=PropertyType.MAP,
    description="Input values to apply to the software configuration on this server.",
    update_allowed=True,
)
DEPLOY_ACTIONS_PROP = PropertySchema(
    type=PropertyType.LIST,
    description="Which lifecycle actions of the deployment resource will result in "
    "this deployment being triggered.",
    default=list(DEFAULT_ACTIONS),
    constraints=(AllowedValues(DEPLOY_ACTIONS),),
    update_allowed=True,
)
DEPLOY_NAME = PropertySchema(
    type=PropertyType.STRING,
    description="Name of the derived config associated with this deployment. This is "
    "used to apply a sort order to the list of configurations currently deployed to a "
    "server.",
    update_allowed=True,
)
SIGNAL_TRANSPORT = PropertySchema(
    type=PropertyType.STRING,
    description="How the server should signal to heat with the deployment output "
    "values. NO_SIGNAL will result in the resource going to the COMPLETE state without "
    "waiting for any signal.",
    default=DEFAULT_SIGNAL_TRANSPORT,
    constraints=(AllowedValues(SIGNAL_TRANSPORTS),),
)
INPUT_KEY = PropertySchema(
    type=PropertyType.STRING,
    description="Name of key to use for substituting inputs during deployment.",
    default="get_input",
)
INPUT_VALUES_VALIDATE = PropertySchema(
    type=PropertyType.STRING,
    description="Perform a check on the input values passed to verify that each "
    "required input has a corresponding value. When the property is set to STRICT and "
    "no value is passed, an exception is raised.",
    default="LAX",
    constraints=(AllowedValues(("LAX", "STRICT")),),
)
SERVERS = PropertySchema(
    type=PropertyType.MAP,
    description="A map of names and server IDs to apply configuration to. The name is "
    "arbitrary and is used as the Heat resource name for the corresponding deployment.",
    update_allowed=True,
    required=True,
)
COMPONENT_CONFIGS = PropertySchema(
    type=PropertyType.LIST,
    description="The list of configurations for the different lifecycle actions of the "
    "represented software component.",
    required=True,
    constraints=(Length(min=1),),
    schema=PropertySchema(
        type=PropertyType.MAP,
        schema={
            "actions": PropertySchema(
                type=PropertyType.LIST,
                description="Lifecycle actions to which the configuration applies.",
                default=list(DEFAULT_ACTIONS),
                constraints=(Length(min=1),),
                schema=PropertySchema(type=PropertyType.STRING),
            ),
            "config": CONFIG_TEXT,
            "tool": PropertySchema(
                type=PropertyType.STRING,
                description="The configuration tool used to actually apply the "
                "configuration on a server.",
                required=True,
            ),
        },
    ),
)
BATCH_SIZE = Range(min=1)
