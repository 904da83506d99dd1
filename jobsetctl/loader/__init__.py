"""Reading manifests: files and directories, YAML with positions, objects and Lists."""
