import { PlatformRule } from './platform-rule';
import { SSI_R1 } from './ssi-r1-unique-role-names';
import { SSI_R2 } from './ssi-r2-unique-policy-names';
import { SSI_R3 } from './ssi-r3-distinct-permission-scopes';
import { SSI_R4 } from './ssi-r4-unique-accounts-and-ci-paths';
import { SSI_R5 } from './ssi-r5-no-cross-application-access';
import { SSI_R6 } from './ssi-r6-ci-secrets-outside-applications';
import { SSI_R7 } from './ssi-r7-distinct-auth-mount-paths';
import { SSI_R8 } from './ssi-r8-ci-secrets-have-readers';
import { SSI_R9 } from './ssi-r9-reserved-store-names';
import { SSI_R10 } from './ssi-r10-claims-pin-organisation';
import { SSI_R11 } from './ssi-r11-environment-variable-names';
import { SSI_R12 } from './ssi-r12-people-off-machine-paths';
import { SSI_R13 } from './ssi-r13-people-roles-pin-group';
import { SSI_R14 } from './ssi-r14-catalogued-store-objects';
import { SSI_R15 } from './ssi-r15-names-known-at-synthesis';
import { SSI_R16 } from './ssi-r16-access-invariants';
import { SSI_R17 } from './ssi-r17-pipeline-grants-match-final-objects';
import { SSI_R18 } from './ssi-r18-write-order';

/** The rules checked at every synthesis, in id order (RULES.md lists them from here). */
export const PLATFORM_RULES: readonly PlatformRule[] = [SSI_R1, SSI_R2, SSI_R3, SSI_R4, SSI_R5, SSI_R6, SSI_R7, SSI_R8, SSI_R9, SSI_R10, SSI_R11, SSI_R12, SSI_R13, SSI_R14, SSI_R15, SSI_R16, SSI_R17, SSI_R18];
