"""JobSet: API constants, defaulting and validating webhooks, and what the controller renders."""
