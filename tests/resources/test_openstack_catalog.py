"""Spot checks of the Heat resource-type catalog against facts read from Heat."""

from __future__ import annotations

import dataclasses
import re

import pytest

from convection.resources._schema import PropertyType
from convection.resources.openstack_catalog import (
    OpenStackType,
    SupportStatus,
    lookup,
    names,
    resolve_alias,
)

# Heat's names are "::"-separated CamelCase words; LBaaS and TaaS add a level.
NAME_PATTERN = re.compile(r"^(OS|AWS)::[A-Za-z0-9]+(::[A-Za-z0-9]+){1,2}$")


def entry(name: str) -> OpenStackType:
    found = lookup(name)
    assert found is not None, name
    return found


def test_names_are_unique_sorted_and_heat_shaped() -> None:
    all_names = names()
    assert len(all_names) == len(set(all_names))
    assert all_names == sorted(all_names)
    bad = [n for n in all_names if not NAME_PATTERN.match(n)]
    assert bad == []


def test_visible_names_cover_heats_template_guide() -> None:
    # A sample of the types Heat's current template guide documents.
    visible = set(names(include_hidden=False))
    for name in (
        "OS::Nova::Server",
        "OS::Neutron::FloatingIPPortForward",
        "OS::Neutron::TaaS::TapService",
        "OS::Octavia::AvailabilityZoneProfile",
        "OS::Aodh::PrometheusAlarm",
        "OS::Zaqar::SignedQueueURL",
        "AWS::EC2::SubnetRouteTableAssociation",
        "AWS::IAM::AccessKey",
    ):
        assert name in visible
    assert "OS::Sahara::Cluster" not in visible
    assert "OS::Sahara::Cluster" in names()


def test_nova_server_schema() -> None:
    server = entry("OS::Nova::Server")
    assert server.catalogued
    props = server.properties
    assert props is not None
    assert props["flavor"].required
    assert props["flavor"].type is PropertyType.STRING
    assert not props["image"].required
    assert props["networks"].type is PropertyType.LIST
    assert props["metadata"].type is PropertyType.MAP
    assert props["config_drive"].type is PropertyType.BOOLEAN
    assert props["user_data_format"].type is PropertyType.STRING
    assert props["admin_user"].hidden
    assert server.required_properties == {"flavor"}
    for attr in ("first_address", "addresses", "networks", "name", "accessIPv4", "show"):
        assert server.accepts_attribute(attr), attr
    assert not server.accepts_attribute("ip_address")
    assert server.accepts_property("diskConfig")
    assert not server.accepts_property("flavour")


def test_nova_keypair_flavor_and_servergroup() -> None:
    keypair = entry("OS::Nova::KeyPair")
    assert keypair.required_properties == {"name"}
    assert keypair.accepts_attribute("private_key")
    flavor = entry("OS::Nova::Flavor")
    assert flavor.required_properties == {"ram", "vcpus"}
    assert flavor.properties is not None
    assert flavor.properties["rxtx_factor"].type is PropertyType.NUMBER
    group = entry("OS::Nova::ServerGroup")
    assert group.attributes == frozenset({"show"})


def test_neutron_port() -> None:
    port = entry("OS::Neutron::Port")
    assert port.accepts_attribute("fixed_ips")
    assert port.accepts_attribute("network")
    assert port.accepts_property("binding:vnic_type")
    assert port.missing_required(["name"]) == ("network",)
    # Heat translates the hidden network_id onto network before checking.
    assert port.missing_required(["network_id"]) == ()


def test_neutron_network_types() -> None:
    subnet = entry("OS::Neutron::Subnet")
    assert subnet.properties is not None
    assert subnet.properties["ip_version"].type is PropertyType.INTEGER
    assert subnet.required_properties == {"network"}
    assert entry("OS::Neutron::Net").accepts_attribute("mtu")
    interface = entry("OS::Neutron::RouterInterface")
    assert interface.missing_required(["router_id", "subnet"]) == ()
    assert entry("OS::Neutron::FloatingIP").required_properties == {"floating_network"}
    assert entry("OS::Neutron::SecurityGroupRule").required_properties == {"security_group"}


def test_cinder_glance_swift_keystone() -> None:
    volume = entry("OS::Cinder::Volume")
    assert volume.properties is not None
    assert volume.properties["size"].type is PropertyType.INTEGER
    assert volume.accepts_attribute("attachments_list")
    attachment = entry("OS::Cinder::VolumeAttachment")
    assert attachment.required_properties == {"instance_uuid", "volume_id"}
    image = entry("OS::Glance::WebImage")
    assert image.required_properties == {"disk_format", "container_format", "location"}
    container = entry("OS::Swift::Container")
    assert container.accepts_property("X-Container-Read")
    assert container.accepts_attribute("WebsiteURL")
    assert entry("OS::Keystone::Project").accepts_attribute("domain_id")
    assert entry("OS::Keystone::User").accepts_property("roles")


def test_octavia() -> None:
    listener = entry("OS::Octavia::Listener")
    assert listener.required_properties == {"protocol_port", "protocol"}
    pool = entry("OS::Octavia::Pool")
    assert pool.required_properties == {"lb_algorithm", "protocol"}
    assert entry("OS::Octavia::LoadBalancer").required_properties == {"vip_subnet"}
    assert entry("OS::Octavia::HealthMonitor").accepts_attribute("pools")


def test_aws_types() -> None:
    instance = entry("AWS::EC2::Instance")
    assert instance.required_properties == {"ImageId", "InstanceType"}
    assert instance.accepts_attribute("PublicIp")
    assert not instance.accepts_property("image_id")
    wait = entry("AWS::CloudFormation::WaitCondition")
    assert wait.required_properties == {"Handle", "Timeout"}
    assert wait.accepts_attribute("Data")
    handle = entry("AWS::CloudFormation::WaitConditionHandle")
    assert handle.properties == {}
    assert not handle.accepts_property("Anything")
    group = entry("AWS::AutoScaling::AutoScalingGroup")
    assert group.required_properties == {"AvailabilityZones", "MaxSize", "MinSize"}


def test_heat_group_types_take_synthetic_attributes() -> None:
    group = entry("OS::Heat::ResourceGroup")
    assert group.required_properties == {"resource_def"}
    assert group.accepts_attribute("resource.0.first_address")
    deployment = entry("OS::Heat::SoftwareDeployment")
    assert deployment.accepts_property("actions")
    assert not deployment.accepts_property("deploy_actions")
    assert deployment.accepts_attribute("result_of_my_script")


def test_hidden_and_removed_types() -> None:
    floating = entry("OS::Nova::FloatingIP")
    assert floating.hidden
    assert floating.status is SupportStatus.HIDDEN
    assert not floating.placeholder
    gateway = entry("OS::Neutron::RouterGateway")
    assert gateway.hidden
    # Removed plugins survive as NoneResource stand-ins: anything goes.
    for name in ("OS::Neutron::LBaaS::LoadBalancer", "OS::Senlin::Cluster"):
        gone = entry(name)
        assert gone.hidden and gone.placeholder
        assert gone.accepts_property("whatever")
        assert gone.accepts_attribute("whatever")
        assert gone.registered_by_default
    assert entry("OS::Neutron::ExtraRoute").status is SupportStatus.UNSUPPORTED
    assert not entry("OS::Heat::CWLiteAlarm").registered_by_default


def test_names_only_entries_accept_anything() -> None:
    trunk = entry("OS::Neutron::Trunk")
    assert trunk.properties is None and trunk.attributes is None
    assert not trunk.catalogued
    assert trunk.accepts_property("port") and trunk.accepts_attribute("sub_ports")


def test_catalogued_types_have_base_show_attribute() -> None:
    for name in names():
        found = entry(name)
        if found.attributes is not None:
            assert "show" in found.attributes, name
        if found.properties is not None:
            assert found.required_properties <= set(found.properties), name
            for old, new in found.renamed.items():
                assert old in found.properties and new in found.properties, name


def test_lookup_unknown_and_quantum_alias() -> None:
    assert lookup("OS::Nova::Serverr") is None
    assert lookup("OS::Neutron::Net ") is None
    assert resolve_alias("OS::Quantum::Net") == "OS::Neutron::Net"
    assert entry("OS::Quantum::Net").name == "OS::Neutron::Net"
    assert lookup("OS::Quantum::Net", follow_aliases=False) is None
    assert "OS::Quantum::Net" not in names()


def test_entries_are_frozen() -> None:
    server = entry("OS::Nova::Server")
    with pytest.raises(dataclasses.FrozenInstanceError):
        server.name = "x"  # type: ignore[misc]
    assert server.properties is not None
    with pytest.raises(TypeError):
        server.properties["x"] = server.properties["name"]  # type: ignore[index]
