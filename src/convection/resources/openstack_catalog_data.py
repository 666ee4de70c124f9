"""The facts behind :mod:`convection.resources.openstack_catalog`, as plain data.

Every entry was read from OpenStack Heat's source (``heat/engine/resources/
openstack/`` and ``heat/engine/resources/aws/``: each module's
``resource_mapping()``, ``properties_schema``, ``attributes_schema`` and
``support_status``) or, for type names only, from Heat's template guide
index, which lists every type that is not hidden. Nothing here is code
from Heat; it is names, types and flags.

The sources were not all one release: schemas come from whichever stored
version of each module was read (Heat 10 to 25), so a property added
later may be missing. Where a ``note`` says "inferred", the status was
deduced from the type's absence in the current template guide rather
than read from its module.

Mini-language, parsed by the catalog module:

* ``props``: space-separated ``name:t`` where ``t`` is ``s`` string,
  ``i`` integer, ``n`` number, ``b`` boolean, ``m`` map, ``l`` list; a
  trailing ``!`` means required, a trailing ``~`` means the property is
  hidden by its support status (still accepted, no longer documented).
  The name is everything before the last ``:`` (``binding:vnic_type:s``).
* ``attrs``: space-separated attribute names, without the ``show``
  attribute every Heat resource has (the catalog adds it).
* ``renamed``: ``old>new`` pairs for Heat's translation rules that move a
  hidden old property onto its replacement before validation, so giving
  the old name satisfies the new one's ``required``.
* ``props=None`` / ``attrs=None``: not catalogued, accept any.
"""

from __future__ import annotations

from typing import NamedTuple


class Raw(NamedTuple):
    name: str
    props: str | None = None
    attrs: str | None = None
    #: Heat's support status: SUPPORTED, DEPRECATED, UNSUPPORTED or HIDDEN.
    status: str = "SUPPORTED"
    #: Heat overrides ``get_attribute`` for the type: any attribute name passes validation.
    dynamic: bool = False
    #: A NoneResource stand-in left behind when Heat removed the real plugin.
    placeholder: bool = False
    #: False when Heat registers the type only if a non-default option is set.
    default: bool = True
    renamed: str = ""
    note: str = ""


def _placeholder(name: str, note: str) -> Raw:
    """A removed type Heat still registers as a NoneResource: any properties,
    any attribute, so existing stacks can still be deleted."""
    return Raw(name, status="HIDDEN", placeholder=True, note=note)


def _placeholders(prefix: str, names: str, note: str) -> list[Raw]:
    return [_placeholder(prefix + n, note) for n in names.split()]


def _names(prefix: str, names: str, status: str = "SUPPORTED", note: str = "") -> list[Raw]:
    return [Raw(prefix + n, status=status, note=note) for n in names.split()]


# --- Nova -----------------------------------------------------------------

NOVA: list[Raw] = [
    Raw(
        "OS::Nova::Server",
        props=(
            "name:s image:s block_device_mapping:l block_device_mapping_v2:l flavor:s! "
            "flavor_update_policy:s image_update_policy:s key_name:s admin_user:s~ "
            "availability_zone:s security_groups:l networks:l scheduler_hints:m metadata:m "
            "user_data_format:s software_config_transport:s user_data_update_policy:s "
            "user_data:s reservation_id:s config_drive:b diskConfig:s personality:m "
            "admin_pass:s tags:l deployment_swift_data:m"
        ),
        attrs=(
            "name addresses networks first_address instance_name accessIPv4 accessIPv6 "
            "console_urls tags os_collect_config"
        ),
        note="first_address is a hidden attribute; personality is deprecated",
    ),
    Raw(
        "OS::Nova::KeyPair",
        props="name:s! save_private_key:b public_key:s type:s user:s",
        attrs="public_key private_key",
    ),
    Raw(
        "OS::Nova::Flavor",
        props=(
            "tenants:l flavorid:s name:s ram:i! vcpus:i! disk:i swap:i ephemeral:i "
            "rxtx_factor:n extra_specs:m is_public:b"
        ),
        attrs="is_public extra_specs",
    ),
    Raw("OS::Nova::ServerGroup", props="name:s policies:l", attrs=""),
    Raw(
        "OS::Nova::FloatingIP",
        props="pool:s",
        attrs="pool ip",
        status="HIDDEN",
        note="hidden since 11.0.0; use OS::Neutron::FloatingIP",
    ),
    Raw(
        "OS::Nova::FloatingIPAssociation",
        props="server_id:s! floating_ip:s!",
        attrs="",
        status="HIDDEN",
        note="hidden since 11.0.0; use OS::Neutron::FloatingIPAssociation",
    ),
    *_names("OS::Nova::", "HostAggregate Quota"),
]

# --- Neutron --------------------------------------------------------------

_LBAAS_V2_GONE = "LBaaS v2 removed (hidden since 21.0.0); use OS::Octavia::*"

NEUTRON: list[Raw] = [
    Raw(
        "OS::Neutron::Net",
        props=(
            "name:s value_specs:m admin_state_up:b tenant_id:s shared:b dhcp_agent_ids:l "
            "port_security_enabled:b qos_policy:s dns_domain:s tags:l"
        ),
        attrs=(
            "status name subnets admin_state_up tenant_id port_security_enabled mtu "
            "qos_policy_id l2_adjacency segments"
        ),
    ),
    Raw(
        "OS::Neutron::Subnet",
        props=(
            "network_id:s~ network:s! subnetpool:s prefixlen:i cidr:s value_specs:m name:s "
            "ip_version:i dns_nameservers:l gateway_ip:s enable_dhcp:b allocation_pools:l "
            "tenant_id:s host_routes:l ipv6_ra_mode:s ipv6_address_mode:s segment:s tags:l"
        ),
        attrs=(
            "name network_id tenant_id allocation_pools gateway_ip host_routes ip_version "
            "cidr dns_nameservers enable_dhcp"
        ),
        renamed="network_id>network",
    ),
    Raw(
        "OS::Neutron::Port",
        props=(
            "name:s network_id:s~ network:s! fixed_ips:l security_groups:l "
            "replacement_policy:s~ device_id:s device_owner:s dns_name:s tags:l "
            "value_specs:m admin_state_up:b mac_address:s allowed_address_pairs:l "
            "binding:vnic_type:s qos_policy:s port_security_enabled:b"
        ),
        attrs=(
            "admin_state_up device_id device_owner fixed_ips mac_address name network_id "
            "security_groups status tenant_id allowed_address_pairs subnets "
            "port_security_enabled qos_policy_id dns_assignment network"
        ),
        renamed="network_id>network",
    ),
    Raw(
        "OS::Neutron::Router",
        props=(
            "name:s external_gateway_info:m value_specs:m admin_state_up:b l3_agent_id:s~ "
            "l3_agent_ids:l distributed:b ha:b tags:l"
        ),
        attrs="status external_gateway_info name admin_state_up tenant_id",
    ),
    Raw(
        "OS::Neutron::RouterInterface",
        props="router:s! router_id:s~ subnet_id:s~ subnet:s port_id:s~ port:s",
        attrs="",
        renamed="router_id>router subnet_id>subnet port_id>port",
    ),
    Raw(
        "OS::Neutron::RouterGateway",
        props="router_id:s! network_id:s~ network:s",
        attrs="",
        status="HIDDEN",
        renamed="network_id>network",
        note="hidden since 5.0.0; use the router's external_gateway_info",
    ),
    Raw(
        "OS::Neutron::FloatingIP",
        props=(
            "floating_network_id:s~ floating_network:s! floating_subnet:s value_specs:m "
            "port_id:s fixed_ip_address:s floating_ip_address:s dns_name:s dns_domain:s"
        ),
        attrs=(
            "router_id tenant_id floating_network_id fixed_ip_address floating_ip_address port_id"
        ),
        renamed="floating_network_id>floating_network",
    ),
    Raw(
        "OS::Neutron::FloatingIPAssociation",
        props="floatingip_id:s! port_id:s! fixed_ip_address:s",
        attrs="",
    ),
    Raw("OS::Neutron::SecurityGroup", props="name:s description:s rules:l", attrs=""),
    Raw(
        "OS::Neutron::SecurityGroupRule",
        props=(
            "security_group:s! description:s direction:s ethertype:s port_range_min:i "
            "port_range_max:i protocol:s remote_group:s remote_ip_prefix:s"
        ),
        attrs="",
    ),
    Raw(
        "OS::Neutron::Firewall",
        props=(
            "name:s description:s admin_state_up:b firewall_policy_id:s! value_specs:m shared:b"
        ),
        attrs="name description admin_state_up firewall_policy_id shared status tenant_id",
    ),
    Raw(
        "OS::Neutron::FirewallPolicy",
        props="name:s description:s shared:b audited:b firewall_rules:l",
        attrs="name description firewall_rules shared audited tenant_id",
    ),
    Raw(
        "OS::Neutron::FirewallRule",
        props=(
            "name:s description:s shared:b protocol:s ip_version:s source_ip_address:s "
            "destination_ip_address:s source_port:s destination_port:s action:s enabled:b"
        ),
        attrs=(
            "name description firewall_policy_id shared protocol ip_version "
            "source_ip_address destination_ip_address source_port destination_port action "
            "enabled position tenant_id"
        ),
    ),
    Raw(
        "OS::Neutron::ExtraRoute",
        props="router_id:s! destination:s! nexthop:s!",
        attrs="",
        status="UNSUPPORTED",
    ),
    *_names(
        "OS::Neutron::",
        "AddressScope ExtraRouteSet FloatingIPPortForward IKEPolicy IPsecPolicy "
        "IPsecSiteConnection L2Gateway L2GatewayConnection MeteringLabel MeteringRule "
        "NetworkGateway ProviderNet QoSBandwidthLimitRule QoSDscpMarkingRule "
        "QoSMinimumBandwidthRule QoSMinimumPacketRateRule QoSPolicy Quota RBACPolicy "
        "Segment SubnetPool Trunk VPNService TaaS::TapFlow TaaS::TapService",
    ),
    *_names(
        "OS::Neutron::", "FlowClassifier PortChain PortPair PortPairGroup", status="UNSUPPORTED"
    ),
    *_placeholders(
        "OS::Neutron::", "LoadBalancer Pool PoolMember HealthMonitor", "LBaaS v1 removed; hidden"
    ),
    *_placeholders(
        "OS::Neutron::LBaaS::",
        "LoadBalancer Listener Pool PoolMember HealthMonitor L7Policy L7Rule",
        _LBAAS_V2_GONE,
    ),
]

# --- Octavia --------------------------------------------------------------

OCTAVIA: list[Raw] = [
    Raw(
        "OS::Octavia::LoadBalancer",
        props=(
            "description:s name:s provider:s vip_address:s vip_subnet:s! admin_state_up:b "
            "tenant_id:s flavor:s"
        ),
        attrs="vip_address vip_port_id vip_subnet_id pools flavor_id",
    ),
    Raw(
        "OS::Octavia::Listener",
        props=(
            "protocol_port:i! protocol:s! loadbalancer:s default_pool:s name:s "
            "admin_state_up:b description:s default_tls_container_ref:s "
            "sni_container_refs:l connection_limit:i tenant_id:s"
        ),
        attrs="loadbalancers default_pool_id",
    ),
    Raw(
        "OS::Octavia::Pool",
        props=(
            "admin_state_up:b description:s session_persistence:m name:s lb_algorithm:s! "
            "listener:s loadbalancer:s protocol:s!"
        ),
        attrs="healthmonitor_id listeners members",
    ),
    Raw(
        "OS::Octavia::PoolMember",
        props=(
            "pool:s! address:s! protocol_port:i! monitor_address:s monitor_port:i weight:i "
            "admin_state_up:b subnet:s tags:l"
        ),
        note="attributes not catalogued: the read schema names address and pool_id "
        "but declares no attribute schema; tags comes from a Heat release note",
    ),
    Raw(
        "OS::Octavia::HealthMonitor",
        props=(
            "admin_state_up:b delay:i! expected_codes:s http_method:s max_retries:i! "
            "pool:s! timeout:i! type:s! url_path:s tenant_id:s"
        ),
        attrs="pools",
    ),
    Raw(
        "OS::Octavia::L7Policy",
        props=(
            "name:s description:s admin_state_up:b action:s! redirect_pool:s "
            "redirect_url:s position:n listener:s!"
        ),
        attrs="rules",
    ),
    Raw(
        "OS::Octavia::L7Rule",
        props="admin_state_up:b l7policy:s! type:s! compare_type:s! invert:b key:s value:s!",
        attrs="",
    ),
    *_names("OS::Octavia::", "AvailabilityZone AvailabilityZoneProfile Flavor FlavorProfile Quota"),
]

# --- Cinder, Glance, Swift ------------------------------------------------

STORAGE: list[Raw] = [
    Raw(
        "OS::Cinder::Volume",
        props=(
            "availability_zone:s size:i snapshot_id:s backup_id:s name:s description:s "
            "volume_type:s metadata:m imageRef:s~ image:s source_volid:s scheduler_hints:m "
            "read_only:b multiattach:b"
        ),
        attrs=(
            "availability_zone size snapshot_id display_name display_description volume_type "
            "metadata source_volid status created_at bootable metadata_values encrypted "
            "attachments attachments_list multiattach"
        ),
    ),
    Raw(
        "OS::Cinder::VolumeAttachment",
        props="instance_uuid:s! volume_id:s! mountpoint:s",
        attrs="",
    ),
    Raw(
        "OS::Cinder::VolumeType",
        props="name:s! metadata:m is_public:b description:s projects:l",
        attrs="",
    ),
    Raw(
        "OS::Cinder::EncryptedVolumeType",
        props="provider:s! control_location:s cipher:s key_size:i volume_type:s!",
        attrs="",
    ),
    Raw("OS::Cinder::QoSSpecs", props="name:s specs:m!", attrs=""),
    Raw("OS::Cinder::QoSAssociation", props="qos_specs:s! volume_types:l!", attrs=""),
    Raw("OS::Cinder::Quota"),
    Raw(
        "OS::Glance::WebImage",
        props=(
            "name:s id:s min_disk:i min_ram:i protected:b disk_format:s! container_format:s! "
            "location:s! tags:l architecture:s kernel_id:s os_distro:s os_version:s owner:s "
            "visibility:s ramdisk_id:s"
        ),
        attrs="",
    ),
    Raw(
        "OS::Glance::Image",
        props=(
            "name:s id:s is_public:b min_disk:i min_ram:i protected:b disk_format:s! "
            "container_format:s! location:s! tags:l extra_properties:m architecture:s "
            "kernel_id:s os_distro:s owner:s ramdisk_id:s"
        ),
        attrs="",
        status="HIDDEN",
        note="deprecated in 8.0.0 (needs the Glance v1 API); absent from the current "
        "template guide, so hidden (inferred); use OS::Glance::WebImage",
    ),
    Raw(
        "OS::Swift::Container",
        props=(
            "name:s X-Container-Read:s X-Container-Write:s X-Container-Meta:m "
            "X-Account-Meta:m PurgeOnDelete:b"
        ),
        attrs="DomainName WebsiteURL RootURL ObjectCount BytesUsed HeadContainer",
    ),
]

# --- Keystone -------------------------------------------------------------

_ROLES = "roles:l"

KEYSTONE: list[Raw] = [
    Raw(
        "OS::Keystone::Project",
        props="name:s domain:s description:s enabled:b parent:s tags:l",
        attrs="name parent_id domain_id enabled is_domain",
    ),
    Raw(
        "OS::Keystone::User",
        props=(
            "name:s domain:s description:s enabled:b email:s password:s default_project:s "
            f"groups:l {_ROLES}"
        ),
        attrs="name default_project_id domain_id enabled password_expires_at",
    ),
    Raw("OS::Keystone::Role", props="name:s domain:s", attrs=""),
    Raw("OS::Keystone::Group", props=f"name:s domain:s description:s {_ROLES}", attrs=""),
    Raw("OS::Keystone::UserRoleAssignment", props=f"user:s! {_ROLES}", attrs=""),
    Raw("OS::Keystone::GroupRoleAssignment", props=f"group:s! {_ROLES}", attrs=""),
    *_names("OS::Keystone::", "Domain Endpoint Region Service"),
]

# --- Heat's own (OS::Heat::*) ---------------------------------------------

_SD = "config:s server:s! input_values:m actions:l name:s signal_transport:s"
_SDG = "servers:m! config:s input_values:m actions:l name:s signal_transport:s"
_STRUCT = "input_key:s input_values_validate:s"
_SC_IO = "group:s options:m inputs:l outputs:l"

HEAT: list[Raw] = [
    Raw("OS::Heat::WaitCondition", props="handle:s! timeout:n! count:i", attrs="data"),
    Raw(
        "OS::Heat::WaitConditionHandle",
        props="signal_transport:s",
        attrs="token endpoint curl_cli signal",
    ),
    Raw("OS::Heat::UpdateWaitConditionHandle", props="", attrs=""),
    Raw("OS::Heat::SoftwareConfig", props=f"{_SC_IO} config:s", attrs="config"),
    Raw("OS::Heat::StructuredConfig", props=f"{_SC_IO} config:m", attrs="config"),
    Raw("OS::Heat::CloudConfig", props="cloud_config:m", attrs="config"),
    Raw("OS::Heat::MultipartMime", props="parts:l", attrs="config"),
    Raw(
        "OS::Heat::SoftwareDeployment",
        props=_SD,
        attrs="deploy_stdout deploy_stderr deploy_status_code",
        dynamic=True,
        note="any output declared by the config is also an attribute",
    ),
    Raw(
        "OS::Heat::StructuredDeployment",
        props=f"{_SD} {_STRUCT}",
        attrs="deploy_stdout deploy_stderr deploy_status_code",
        dynamic=True,
    ),
    Raw(
        "OS::Heat::SoftwareDeploymentGroup",
        props=_SDG,
        attrs="deploy_stdouts deploy_stderrs deploy_status_codes",
        dynamic=True,
    ),
    Raw(
        "OS::Heat::StructuredDeploymentGroup",
        props=f"{_SDG} {_STRUCT}",
        attrs="deploy_stdouts deploy_stderrs deploy_status_codes",
        dynamic=True,
    ),
    Raw(
        "OS::Heat::SoftwareDeployments",
        props=_SDG,
        attrs="deploy_stdouts deploy_stderrs deploy_status_codes",
        status="HIDDEN",
        dynamic=True,
        note="hidden since 7.0.0; use OS::Heat::SoftwareDeploymentGroup",
    ),
    Raw(
        "OS::Heat::StructuredDeployments",
        props=f"{_SDG} {_STRUCT}",
        attrs="deploy_stdouts deploy_stderrs deploy_status_codes",
        status="HIDDEN",
        dynamic=True,
        note="deprecated since 2014.2; absent from the current template guide, so "
        "hidden (inferred); use OS::Heat::StructuredDeploymentGroup",
    ),
    Raw(
        "OS::Heat::ResourceGroup",
        props="count:i index_var:s resource_def:m! removal_policies:l removal_policies_mode:s",
        attrs="refs refs_map attributes removed_rsrc_list",
        dynamic=True,
        note="resource.<n> and member attributes are synthetic",
    ),
    Raw(
        "OS::Heat::AutoScalingGroup",
        props="resource:m! max_size:i! min_size:i! cooldown:i desired_capacity:i rolling_updates:m",
        attrs="outputs outputs_list current_size refs refs_map",
        dynamic=True,
    ),
    Raw(
        "OS::Heat::ScalingPolicy",
        props=(
            "auto_scaling_group_id:s! scaling_adjustment:n! adjustment_type:s! cooldown:n "
            "min_adjustment_step:i"
        ),
        attrs="alarm_url signal_url",
    ),
    Raw(
        "OS::Heat::Stack",
        props="context:m template:s! timeout:i parameters:m",
        attrs="stack_name outputs",
    ),
    _placeholder("OS::Heat::HARestarter", "removed in 10.0.0; hidden"),
    Raw(
        "OS::Heat::CWLiteAlarm",
        status="HIDDEN",
        placeholder=True,
        default=False,
        note="removed in 10.0.0; registered only when enable_cloud_watch_lite is set",
    ),
    *_names(
        "OS::Heat::",
        "AccessPolicy Delay DeployedServer InstanceGroup None RandomString ResourceChain "
        "SoftwareComponent SwiftSignal SwiftSignalHandle TestResource Value",
    ),
]

# --- AWS (CloudFormation-compatible) --------------------------------------

AWS: list[Raw] = [
    Raw(
        "AWS::EC2::Instance",
        props=(
            "ImageId:s! InstanceType:s! KeyName:s AvailabilityZone:s DisableApiTermination:s "
            "KernelId:s Monitoring:b PlacementGroupName:s PrivateIpAddress:s RamDiskId:s "
            "SecurityGroups:l SecurityGroupIds:l NetworkInterfaces:l SourceDestCheck:b "
            "SubnetId:s Tags:l NovaSchedulerHints:l Tenancy:s UserData:s Volumes:l "
            "BlockDeviceMappings:l"
        ),
        attrs="AvailabilityZone PrivateDnsName PublicDnsName PrivateIp PublicIp",
    ),
    Raw(
        "AWS::CloudFormation::WaitCondition",
        props="Handle:s! Timeout:i! Count:i",
        attrs="Data",
    ),
    Raw("AWS::CloudFormation::WaitConditionHandle", props="", attrs=""),
    Raw(
        "AWS::CloudFormation::Stack",
        props="TemplateURL:s! TimeoutInMinutes:i Parameters:m",
        attrs="",
        dynamic=True,
        note="attributes are Outputs.<name> of the nested stack",
    ),
    Raw(
        "AWS::AutoScaling::AutoScalingGroup",
        props=(
            "AvailabilityZones:l! LaunchConfigurationName:s MaxSize:i! MinSize:i! Cooldown:i "
            "DesiredCapacity:i HealthCheckGracePeriod:i HealthCheckType:s "
            "LoadBalancerNames:l VPCZoneIdentifier:l Tags:l InstanceId:s"
        ),
        attrs="InstanceList",
    ),
    Raw(
        "AWS::AutoScaling::LaunchConfiguration",
        props=(
            "ImageId:s InstanceType:s KeyName:s UserData:s SecurityGroups:l KernelId:s "
            "RamDiskId:s BlockDeviceMappings:l NovaSchedulerHints:l InstanceId:s"
        ),
        attrs="",
    ),
    Raw(
        "AWS::AutoScaling::ScalingPolicy",
        props=(
            "AutoScalingGroupName:s! ScalingAdjustment:i! AdjustmentType:s! Cooldown:i "
            "MinAdjustmentStep:i"
        ),
        attrs="AlarmUrl",
    ),
    Raw(
        "AWS::CloudWatch::Alarm",
        status="HIDDEN",
        placeholder=True,
        default=False,
        note="only Heat's default environment maps it, onto OS::Heat::CWLiteAlarm",
    ),
    *_names(
        "AWS::",
        "EC2::EIP EC2::EIPAssociation EC2::InternetGateway EC2::NetworkInterface "
        "EC2::RouteTable EC2::SecurityGroup EC2::Subnet EC2::SubnetRouteTableAssociation "
        "EC2::VPC EC2::VPCGatewayAttachment EC2::Volume EC2::VolumeAttachment "
        "ElasticLoadBalancing::LoadBalancer IAM::AccessKey IAM::User S3::Bucket",
    ),
]

# --- Other services (names; hidden ones are placeholders) -----------------

OTHER: list[Raw] = [
    Raw(
        "OS::Designate::Zone",
        props=("name:s! ttl:i description:s email:s type:s primaries:l masters:l attributes:m"),
        attrs="serial",
        note="masters is deprecated in favour of primaries",
    ),
    Raw("OS::Designate::RecordSet"),
    _placeholder("OS::Designate::Domain", "hidden since 10.0.0; use OS::Designate::Zone"),
    _placeholder("OS::Designate::Record", "hidden since 10.0.0; use OS::Designate::RecordSet"),
    Raw("OS::Aodh::Alarm", status="UNSUPPORTED", note="threshold alarm; needs ceilometer-api"),
    _placeholder("OS::Aodh::CombinationAlarm", "removed from Aodh; hidden"),
    *_names(
        "OS::Aodh::",
        "CompositeAlarm EventAlarm GnocchiAggregationByMetricsAlarm "
        "GnocchiAggregationByResourcesAlarm GnocchiResourcesAlarm LBMemberHealthAlarm "
        "PrometheusAlarm",
    ),
    *_names("OS::Barbican::", "CertificateContainer GenericContainer Order RSAContainer Secret"),
    *_names("OS::Blazar::", "Host Lease"),
    Raw("OS::Ironic::Port"),
    *_names("OS::Magnum::", "Cluster ClusterTemplate"),
    _placeholder("OS::Magnum::Bay", "hidden since 11.0.0; use OS::Magnum::Cluster"),
    _placeholder(
        "OS::Magnum::BayModel", "hidden with Bay (inferred); use OS::Magnum::ClusterTemplate"
    ),
    *_names("OS::Manila::", "SecurityService Share ShareNetwork ShareType"),
    *_names("OS::Mistral::", "CronTrigger ExternalResource Workflow"),
    *_placeholders(
        "OS::Monasca::", "AlarmDefinition Notification", "Monasca retired; hidden since 25.0.0"
    ),
    *_placeholders(
        "OS::Sahara::",
        "Cluster ClusterTemplate DataSource ImageRegistry Job JobBinary NodeGroupTemplate",
        "Sahara retired; hidden since 23.0.0",
    ),
    *_placeholders(
        "OS::Senlin::",
        "Cluster Node Policy Profile Receiver",
        "Senlin retired; hidden since 23.0.0",
    ),
    *_names("OS::Trove::", "Cluster Instance"),
    Raw("OS::Vitrage::Template", status="UNSUPPORTED"),
    *_names("OS::Zaqar::", "MistralTrigger Queue SignedQueueURL Subscription"),
    Raw("OS::Zun::Container"),
]

ALL: tuple[Raw, ...] = (*NOVA, *NEUTRON, *OCTAVIA, *STORAGE, *KEYSTONE, *HEAT, *AWS, *OTHER)

#: Heat's default global environment (``etc/heat/environment.d/default.yaml``)
#: maps every ``OS::Quantum*`` type onto ``OS::Neutron*``.
PREFIX_ALIASES: tuple[tuple[str, str], ...] = (("OS::Quantum::", "OS::Neutron::"),)
