//! Provider tokens recognised by their published shape alone: a fixed prefix (or a fixed
//! structure) and a body of a known alphabet and length, so that they are secrets wherever they
//! appear, even printed alone on a line. Coverage follows the providers' documentation and the
//! rule sets of gitleaks and detect-secrets; the expressions are our own.
//!
//! Every pattern is anchored on ASCII word boundaries (`\b` before the prefix; after the body
//! where the alphabet allows it), so a token is never cut short and never eats surrounding text.
//! Look-alikes that share a prefix with a secret but are public by design (Stripe `pk_test_`,
//! Mapbox `pk.eyJ…`, Twilio account ids `AC…`) are not in the table.

/// One token shape: the kind written in `[REDACTED:<kind>]` and the expression that finds it
/// (the whole match is the secret, or capture group 1 when there is one).
pub(super) struct Token {
    pub kind: &'static str,
    pub pattern: &'static str,
}

const fn t(kind: &'static str, pattern: &'static str) -> Token {
    Token { kind, pattern }
}

/// The table, one row per provider format.
pub(super) static TOKENS: &[Token] = &[
    t("huggingface-token", r"(?-u:\b)hf_[A-Za-z]{30,}(?-u:\b)"),
    t(
        "huggingface-token",
        r"(?-u:\b)api_org_[A-Za-z]{30,}(?-u:\b)",
    ),
    t("google-oauth-token", r"(?-u:\b)ya29\.[0-9A-Za-z_-]{20,}"),
    t("google-oauth-token", r"(?-u:\b)1//0[0-9A-Za-z_-]{30,}"),
    t(
        "google-oauth-secret",
        r"(?-u:\b)GOCSPX-[0-9A-Za-z_-]{28}(?-u:\b)",
    ),
    t("heroku-key", r"(?-u:\b)HRKU-[0-9A-Za-z_-]{20,}"),
    t(
        "age-secret-key",
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
    ),
    t(
        "doppler-token",
        r"(?-u:\b)dp\.(?:pt|st|ct|sa|scim|audit)\.[0-9A-Za-z]{40,}",
    ),
    t(
        "stripe-webhook-secret",
        r"(?-u:\b)whsec_[0-9A-Za-z+/=]{24,}",
    ),
    t(
        "grafana-token",
        r"(?-u:\b)glsa_[0-9A-Za-z]{32}_[0-9a-fA-F]{8}(?-u:\b)",
    ),
    t("grafana-token", r"(?-u:\b)glc_[0-9A-Za-z+/]{32,}={0,3}"),
    t(
        "telegram-bot-token",
        r"(?-u:\b)[0-9]{5,16}:A[0-9A-Za-z_-]{34}(?-u:\b)",
    ),
    t(
        "alibaba-access-key",
        r"(?-u:\b)LTAI[0-9A-Za-z]{12,20}(?-u:\b)",
    ),
    t("npm-token", r"(?-u:\b)npm_[0-9A-Za-z]{36}(?-u:\b)"),
    t("pypi-token", r"(?-u:\b)pypi-AgE[0-9A-Za-z_-]{50,}"),
    t("rubygems-key", r"(?-u:\b)rubygems_[0-9a-f]{48}(?-u:\b)"),
    t(
        "shopify-token",
        r"(?-u:\b)shp(?:at|ca|pa|ss)_[0-9a-fA-F]{32}(?-u:\b)",
    ),
    t(
        "sendgrid-key",
        r"(?-u:\b)SG\.[0-9A-Za-z_-]{22}\.[0-9A-Za-z_-]{43}",
    ),
    t(
        "sendinblue-key",
        r"(?-u:\b)xkeysib-[0-9a-f]{64}-[0-9A-Za-z]{16}(?-u:\b)",
    ),
    t("twilio-key", r"(?-u:\b)SK[0-9a-f]{32}(?-u:\b)"),
    t("mailgun-key", r"(?-u:\b)key-[0-9a-f]{32}(?-u:\b)"),
    t(
        "mailchimp-key",
        r"(?-u:\b)[0-9a-f]{32}-us[0-9]{1,2}(?-u:\b)",
    ),
    t(
        "digitalocean-token",
        r"(?-u:\b)do[opr]_v1_[0-9a-f]{64}(?-u:\b)",
    ),
    t(
        "databricks-token",
        r"(?-u:\b)dapi[0-9a-f]{32}(?:-[0-9])?(?-u:\b)",
    ),
    t("atlassian-token", r"(?-u:\b)ATATT3[0-9A-Za-z_=-]{100,}"),
    t(
        "linear-key",
        r"(?-u:\b)lin_(?:api|oauth)_[0-9A-Za-z]{40}(?-u:\b)",
    ),
    t(
        "postman-key",
        r"(?-u:\b)PMAK-[0-9a-f]{24}-[0-9a-f]{34}(?-u:\b)",
    ),
    t("pulumi-token", r"(?-u:\b)pul-[0-9a-f]{40}(?-u:\b)"),
    t(
        "terraform-token",
        r"(?-u:\b)[0-9A-Za-z]{14}\.atlasv1\.[0-9A-Za-z_=-]{60,}",
    ),
    t("vault-token", r"(?-u:\b)hv[sbr]\.[0-9A-Za-z_-]{24,}"),
    t(
        "newrelic-key",
        r"(?-u:\b)NR(?:AK|II|JS)-[0-9A-Za-z]{19,32}(?-u:\b)",
    ),
    t(
        "dynatrace-token",
        r"(?-u:\b)dt0c01\.[0-9A-Z]{24}\.[0-9A-Z]{64}(?-u:\b)",
    ),
    t("flyio-token", r"(?-u:\b)fm[12][ar]?_[0-9A-Za-z+/=_-]{40,}"),
    t("flyio-token", r"(?-u:\b)fo1_[0-9A-Za-z_-]{39,}"),
    t("figma-token", r"(?-u:\b)figd_[0-9A-Za-z_-]{40,}"),
    t("notion-token", r"(?-u:\b)ntn_[0-9A-Za-z]{40,}(?-u:\b)"),
    t("notion-token", r"(?-u:\b)secret_[0-9A-Za-z]{43}(?-u:\b)"),
    t(
        "discord-webhook",
        r"discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/([0-9A-Za-z_-]{60,})",
    ),
    t(
        "square-token",
        r"(?-u:\b)sq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}(?-u:\b)",
    ),
    t("square-token", r"(?-u:\b)EAAA[0-9A-Za-z_-]{60}(?-u:\b)"),
    t("supabase-token", r"(?-u:\b)sbp_[0-9a-f]{40}(?-u:\b)"),
    t("groq-key", r"(?-u:\b)gsk_[0-9A-Za-z]{48,}(?-u:\b)"),
    t("replicate-token", r"(?-u:\b)r8_[0-9A-Za-z]{37}(?-u:\b)"),
    t("perplexity-key", r"(?-u:\b)pplx-[0-9A-Za-z]{48}(?-u:\b)"),
    t("xai-key", r"(?-u:\b)xai-[0-9A-Za-z]{80}(?-u:\b)"),
    t(
        "mapbox-secret-token",
        r"(?-u:\b)sk\.eyJ[0-9A-Za-z_-]{20,}\.[0-9A-Za-z_-]{20,}",
    ),
    t(
        "twitter-bearer-token",
        r"(?-u:\b)AAAAAAAAAAAAAAAAAAAAA[0-9A-Za-z%]{40,}",
    ),
    t(
        "facebook-token",
        r"(?-u:\b)EAA[CD][0-9A-Za-z]{100,}(?-u:\b)",
    ),
    t(
        "azure-client-secret",
        r"(?-u:\b)[0-9A-Za-z_~.]{3}[0-9]Q~[0-9A-Za-z_~.-]{31,34}",
    ),
    t(
        "cloudflare-origin-key",
        r"(?-u:\b)v1\.0-[0-9a-f]{24}-[0-9a-f]{146}(?-u:\b)",
    ),
    t("bitbucket-token", r"(?-u:\b)ATBB[0-9A-Za-z_=-]{32,}"),
    t("sentry-token", r"(?-u:\b)sntry[su]_[0-9A-Za-z+/=_-]{40,}"),
    t(
        "django-secret-key",
        r"(?-u:\b)django-insecure-[!-&(-~]{30,}",
    ),
    t(
        "circleci-token",
        r"(?-u:\b)CCIPAT_[0-9A-Za-z]{22}_[0-9a-f]{40}(?-u:\b)",
    ),
    t(
        "contentful-token",
        r"(?-u:\b)CFPAT-[0-9A-Za-z_-]{43}(?-u:\b)",
    ),
    t("dockerhub-token", r"(?-u:\b)dckr_pat_[0-9A-Za-z_-]{27,}"),
    t(
        "tailscale-key",
        r"(?-u:\b)tskey-(?:auth|api|client|scim|webhook)-[0-9A-Za-z]+-[0-9A-Za-z]{20,}",
    ),
    t("openai-admin-key", r"(?-u:\b)sk-admin-[0-9A-Za-z_-]{40,}"),
    t("azure-sas-signature", r"[?&;]sig=([0-9A-Za-z%+/=]{20,})"),
    t(
        "sentry-dsn",
        r"[a-z]+://([0-9a-f]{32}(?::[0-9a-f]{32})?)@[0-9A-Za-z.-]*(?:sentry|ingest)[0-9A-Za-z.-]*",
    ),
];
