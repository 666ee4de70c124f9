"""One router per Heat API resource."""
