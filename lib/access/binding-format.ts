import { createHash } from 'crypto';
import { Duration } from '../model/duration';
import { BindingValue, TTL_FIELDS } from './identity';

/** What 0 means for each duration field. */
const ZERO_MEANS: Readonly<Record<string, string>> = {
  token_ttl: 'store default',
  token_max_ttl: 'store default',
  token_explicit_max_ttl: 'no limit',
  token_period: 'not periodic',
  secret_id_ttl: 'no expiry',
};

/**
 * A PEM key or certificate as people tell it apart: `PEM sha256:<first 16 hex digits>` of the
 * trimmed text (the store keeps PEMs without their final newline). Two keys share their first
 * lines (`-----BEGIN PUBLIC KEY-----MII...`), so a truncated prefix would show them as one.
 */
export function pemFingerprint(pem: string): string {
  return `PEM sha256:${createHash('sha256').update(String(pem).trim()).digest('hex').slice(0, 16)}`;
}

/** True for the fields that hold PEM keys or certificates (`jwt_validation_pubkeys`, `*_ca_pem`). */
export function isPemField(field: string): boolean {
  return field === 'jwt_validation_pubkeys' || field.endsWith('_ca_pem');
}

/**
 * A binding value as people read it: durations as `12h` (`0 (no expiry)`), lists comma-separated,
 * bound claims as `claim: a | b; other: c`.
 */
export function formatBinding(field: string, value: BindingValue | undefined): string {
  if (value === undefined) return '(unset)';
  if (TTL_FIELDS.includes(field) && typeof value === 'number') {
    return value === 0 ? `0 (${ZERO_MEANS[field]})` : Duration.seconds(value).toString();
  }
  if (field.endsWith('_num_uses') && value === 0) return '0 (unlimited)';
  // PEM keys and certificates span lines: shown by digest, which still tells two keys apart.
  if (isPemField(field)) {
    const pems = Array.isArray(value) ? value : [String(value)];
    return pems.map((pem) => pemFingerprint(String(pem))).join(', ');
  }
  if (Array.isArray(value)) return value.join(', ');
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, readonly string[]>)
      .map(([claim, values]) => `${claim}: ${values.join(' | ')}`)
      .join('; ');
  }
  return String(value);
}
