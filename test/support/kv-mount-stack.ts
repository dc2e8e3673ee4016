import { Construct } from 'constructs';
import { KvMount, PlatformSettings, SecretStoreStack } from '../../lib';
import { platformConfig } from './platform-config';

/**
 * A stack of its own beside the platform's, with the platform's settings but another KV mount
 * declaration: for rules that compare paths declared on differently declared mounts.
 */
export const stackWithKvMount = (app: Construct, id: string, mount: KvMount): SecretStoreStack =>
  new SecretStoreStack(app, id, { settings: new PlatformSettings({ ...platformConfig.settings, kvMount: mount }) });
