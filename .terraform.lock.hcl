# This file is maintained automatically by "tofu init".
# Manual edits may be lost in future updates.

provider "registry.opentofu.org/hashicorp/vault" {
  version     = "5.9.0"
  constraints = ">= 5.6.0, < 6.0.0"
  hashes = [
    "h1:sjG1lvqz+yzkH9m6QAs3AR0758Da8o4fOYaSN37AKzE=",
  ]
}
