"""The OS::Heat::* utility types that need no cloud: None, Value,
RandomString, Delay and TestResource."""
